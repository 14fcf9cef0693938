/**
 * The shapes of the server extension's REST API (`<baseUrl>/cgu-lab/...`)
 * as the lab extension sees them.
 */

/**
 * The error body of the platform (the proxy, the controller, the server
 * extension): always a readable `message` and a `code`; the proxy's
 * "notebook_stopped" and "no_access" answers carry where to go next.
 */
export interface IPlatformError {
  message: string;
  code?: string;
  reason?: string;
  detail?: string;
  cause?: string;
  state?: string;
  restart_url?: string;
  portal_url?: string;
}

/** One GPU (or MIG slice) as `GET cgu-lab/resources` reports it. */
export interface IGpuDevice {
  uuid: string;
  model: string;
  /** The MIG profile ("1g.18gb") of a MIG slice; '' or missing for a whole GPU. */
  mig_profile?: string;
  /** Percent busy, 0-100; null when the driver does not say. */
  utilization: number | null;
  memory_used: number;
  memory_total: number;
}

/** The GPUs a notebook was given (its environment), readable or not. */
export interface IGpuAllocation {
  gpu_type: string | null;
  count: number;
  /** As the environment names them: "GPU-…", "MIG-…", an index. */
  devices: string[];
  mig: boolean;
}

/** What `GET cgu-lab/resources` answers. */
export interface IResources {
  cpu: {
    used_cores: number;
    limit_cores: number | null;
    percent: number | null;
  };
  memory: {
    used_bytes: number;
    limit_bytes: number | null;
    /**
     * Processes the kernel's OOM killer stopped in this notebook's memory group
     * since it was made; null where the group's count cannot be read.
     */
    oom_kills?: number | null;
  };
  gpus: {
    /** True when NVML read figures for at least one device. */
    available: boolean;
    message: string;
    devices: IGpuDevice[];
    /** What the notebook was given, whether or not its figures can be read. */
    allocated?: IGpuAllocation;
  };
  requested: {
    cpu_milli: number;
    memory: number;
    gpu_type: string | null;
    gpus: number;
  };
}

/** What `GET cgu-lab/culling` answers: whether and when the idle culler stops the notebook. */
export interface ICullingStatus {
  enabled: boolean;
  persistent: boolean;
  idle_minutes: number;
  warn_minutes: number;
  max_lifetime_hours: number | null;
  last_activity: string | null;
  /** "warn" while a stop is announced and counting down. */
  action: 'keep' | 'warn' | 'stop';
  reason: string;
  message: string;
  /** ISO time of the announced stop; null when none is ahead. */
  stop_at: string | null;
  /** The server's clock when it answered (ISO): the countdown's reference. */
  now?: string;
  /** How long the notebook has been idle at `now`; null when it is working or unknown. */
  idle_seconds?: number | null;
  /** Why a stop is ahead: "idle" or "lifetime". */
  cause?: 'idle' | 'lifetime' | null;
  /** Why the culler never stops it (an exempt group, the culler off); '' when it may. */
  exempt?: string;
}

/** A GPU type the platform offers. */
export interface IGpuType {
  name: string;
  display_name: string;
  capacity: number;
}

/** What `GET cgu-lab/quota` answers (owner only). */
export interface IQuota {
  limits: {
    cpu_milli: number | null;
    memory: number | null;
    /** null: any type, no limit; an object: only the types it names. */
    gpus: { [type: string]: number } | null;
    notebooks: number | null;
  };
  usage: {
    cpu_milli: number;
    memory: number;
    gpus: { [type: string]: number };
    notebooks: number;
  };
  gpu_types: IGpuType[];
}

/** The body of `POST cgu-lab/resize`. */
export interface IResizeRequest {
  cpu: string;
  memory: string;
  gpu_type: string | null;
  gpus: number;
}

/** What `POST cgu-lab/resize` answers (202). */
export interface IResizeResponse {
  state: string;
  restart_url: string;
}

/** Someone a share is granted to. */
export interface IGrantee {
  kind: 'user' | 'group';
  name: string;
  display_name: string;
}

/** What a share grants. */
export type ShareAccess = 'read' | 'edit';

/** A share of this notebook, as `GET cgu-lab/shares` lists it. */
export interface IShare {
  id: number;
  grantee: IGrantee;
  access: ShareAccess;
  /** '' = the whole notebook. */
  path: string;
  expires_at: string | null;
  created_at: string;
  /** Absolute path (no origin) the grantee opens. */
  url: string;
}

/** The body of `POST cgu-lab/shares`. */
export interface IShareRequest {
  grantee: string;
  kind: 'user' | 'group';
  access: ShareAccess;
  path?: string;
  expires_in_minutes?: number | null;
}

/** A person in `GET cgu-lab/directory`. */
export interface IDirectoryUser {
  name: string;
  display_name: string;
  role: string;
}

/** A group in `GET cgu-lab/directory`. */
export interface IDirectoryGroup {
  name: string;
  display_name: string;
}

/** What `GET cgu-lab/directory?q=` answers. */
export interface IDirectory {
  users: IDirectoryUser[];
  groups: IDirectoryGroup[];
}

/** A notebook (or file) someone shared with me, from `GET cgu-lab/shared-with-me`. */
export interface ISharedWithMe {
  id: number;
  owner: string;
  owner_display_name: string;
  notebook: string;
  access: ShareAccess;
  path: string;
  expires_at: string | null;
  state: 'running' | 'stopped' | 'starting' | 'stopping';
  url: string;
}

/* ------------------------------------------------------- teaching workflow */

/** What `GET cgu-lab/templates/files` answers: the files this notebook's template brought. */
export interface ITemplateFiles {
  template: string | null;
  display_name: string;
  version: number | null;
  files: string[];
}

/** What `GET cgu-lab/files/stat?path=…` answers: which of the paths exist, with sizes. */
export interface IFileStat {
  entries: IFileEntry[];
  excluded_patterns: string[];
}

/** One file or folder of the home, as `GET cgu-lab/files?path=` lists it. */
export interface IFileEntry {
  name: string;
  /** Relative to the home, e.g. "week1/hw.ipynb". */
  path: string;
  type: 'file' | 'directory';
  /** Bytes; for a folder the total of what it contains, excluded files not counted. */
  size: number;
  /** 1 for a file; for a folder how many files it contains. */
  files: number;
  /** True when it matches one of the platform's excluded patterns. */
  excluded: boolean;
}

/** What `GET cgu-lab/files?path=` answers (owner only). */
export interface IFileListing {
  /** The folder listed; '' is the home. */
  path: string;
  entries: IFileEntry[];
  /** The patterns the platform leaves out by default (checkpoints, caches, ...). */
  excluded_patterns: string[];
}

/** Something with a name and a name to show (an environment, a group). */
export interface INamed {
  name: string;
  display_name: string;
}

/** One of my templates in `GET cgu-lab/templates/options`. */
export interface ITemplateSummary {
  name: string;
  display_name: string;
  /** How many versions it has so far. */
  versions: number;
}

/** What `GET cgu-lab/templates/options` answers (owner only). */
export interface ITemplateOptions {
  /** True for teachers, TAs and admins. */
  can_publish: boolean;
  environments: INamed[];
  /** The groups I belong to. */
  groups: INamed[];
  /** My templates; a new version of one of them keeps its name. */
  templates: ITemplateSummary[];
  defaults: {
    environment: string;
    cpu_milli: number;
    memory: number;
    gpu_type: string | null;
    gpus: number;
  };
  /** The size limit of a template's files, in bytes. */
  max_bytes: number;
}

/** Who may start a template. */
export type TemplateVisibility = 'public' | 'group' | 'private';

/** The body of `POST cgu-lab/templates`. */
export interface ITemplateRequest {
  /** Lower-case letters, digits and '-'. */
  name: string;
  display_name: string;
  description: string;
  /** e.g. "2027 spring". */
  version_label: string;
  visibility: TemplateVisibility;
  /** The group, for 'group' visibility. */
  group: string | null;
  environment: string;
  /** e.g. "2" or "500m". */
  cpu: string;
  /** e.g. "4Gi". */
  memory: string;
  gpu_type: string | null;
  gpus: number;
  /** Files and folders of the home to include, relative. */
  paths: string[];
  /** Glob patterns to leave out, e.g. ".ipynb_checkpoints", "*.pyc". */
  excluded: string[];
}

/** What `POST cgu-lab/templates` answers (201). */
export interface ITemplateCreated {
  name: string;
  version: number;
  files: number;
  bytes: number;
  /** The template's page in the controller. */
  url: string;
}

/** An assignment of one of my groups, from `GET cgu-lab/assignments`. */
export interface IAssignment {
  id: number;
  group: string;
  name: string;
  title: string;
  description: string;
  /** ISO time; null when there is none. */
  deadline: string | null;
  allow_late: boolean;
  /** True while I may still submit. */
  open: boolean;
  /** The size limit of a submission, in bytes. */
  max_bytes: number;
  /** How many times I submitted so far. */
  submissions: number;
  last_submitted_at: string | null;
}

/** The body of `POST cgu-lab/submit`. */
export interface ISubmitRequest {
  assignment_id: number;
  paths: string[];
  note: string;
}

/** What `POST cgu-lab/submit` answers (201): the receipt. */
export interface ISubmission {
  id: number;
  /** 1 for the first submission, 2 for the second... */
  number: number;
  assignment: string;
  content_hash: string;
  submitted_at: string;
  late: boolean;
  files: number;
  bytes: number;
  /** The receipt page in the controller. */
  url: string;
}

/** What "Copy to my home" of a live view did (`cgu-lab/courses/<group>/broadcasts/<id>/copy`). */
export interface IBroadcastCopied {
  /** This notebook. */
  notebook: string;
  /** The folder of the home the files are in, e.g. "prof-lecture". */
  folder: string;
  copied: number;
  /** Already there, identical. */
  skipped: number;
  /** Already there and different: kept, the copy saved beside. */
  conflicts: { path: string; saved_as: string }[];
}

/** Course material a teacher put into my home. */
export interface IDeployment {
  id: number;
  title: string;
  /** Relative to the home, e.g. "courses/ml-2026/week1". */
  path: string;
  by: string;
  /** ISO time. */
  at: string;
  /** True when it arrived since I last looked. */
  new: boolean;
}

/** A teacher's notebook shown live, read-only, to a course. */
export interface IBroadcast {
  /** The live view (its share): what "Copy to my home" names. */
  id: number;
  owner: string;
  owner_display_name: string;
  notebook: string;
  /** Opens in a new tab. */
  url: string;
  expires_at: string | null;
  by: string;
}

/** One group of `GET cgu-lab/courses`. */
export interface ICourseGroup {
  name: string;
  display_name: string;
  /** The course folder, relative to the home, e.g. "courses/ml-2026". */
  folder: string;
  deployments: IDeployment[];
  broadcasts: IBroadcast[];
  assignments: IAssignment[];
}

/** What `GET cgu-lab/courses` answers (owner only). */
export interface ICourses {
  groups: ICourseGroup[];
}
