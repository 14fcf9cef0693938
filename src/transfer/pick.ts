/**
 * Where an upload's files come from: the browser's folder chooser (an input
 * with `webkitdirectory`, which every current browser has), its file chooser
 * (for an archive), or a drop of files and folders on the file browser (the
 * File System entries API, read while the drop event lasts). Each gives the
 * files with their paths inside the chosen tree, so the tree is kept.
 */
import { IUploadFile } from './upload';

/** The files of a tree, and its folders that hold nothing (kept too). */
export interface IPicked {
  files: IUploadFile[];
  emptyFolders: string[];
}

/**
 * Open the browser's chooser; resolves with the chosen files, or an empty
 * list when the user closed it. The input is in the page while it is open
 * (some browsers ignore a click on a detached one).
 */
function choose(configure: (input: HTMLInputElement) => void): Promise<File[]> {
  return new Promise(resolve => {
    const input = document.createElement('input');
    input.type = 'file';
    input.hidden = true;
    input.dataset.cgu = 'transfer-input';
    configure(input);
    const done = (files: File[]) => {
      input.remove();
      resolve(files);
    };
    input.addEventListener(
      'change',
      () => done(Array.from(input.files ?? [])),
      {
        once: true
      }
    );
    input.addEventListener('cancel', () => done([]), { once: true });
    document.body.appendChild(input);
    input.click();
  });
}

/** A folder of this computer, with its tree (paths start with the folder's name). */
export async function chooseFolder(): Promise<IPicked> {
  const files = await choose(input => {
    input.webkitdirectory = true;
    input.multiple = true;
  });
  return {
    files: files.map(file => ({
      path: file.webkitRelativePath || file.name,
      file
    })),
    emptyFolders: [] // the chooser lists files only
  };
}

/** Files of this computer (an archive: `accept` lists the suffixes). */
export async function chooseFiles(
  accept: string,
  multiple = false
): Promise<File[]> {
  return choose(input => {
    input.accept = accept;
    input.multiple = multiple;
  });
}

/** Whether a drag carries files from the computer (not an item of the file browser). */
export function carriesFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}

function readEntries(
  reader: FileSystemDirectoryReader
): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}

function fileOf(entry: FileSystemFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

async function walk(
  entry: FileSystemEntry,
  into: IPicked,
  prefix: string
): Promise<void> {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    into.files.push({ path, file: await fileOf(entry as FileSystemFileEntry) });
    return;
  }
  if (!entry.isDirectory) {
    return;
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  let children: FileSystemEntry[] = [];
  // readEntries answers in batches (100 in Chromium) until an empty one.
  for (
    let batch = await readEntries(reader);
    batch.length;
    batch = await readEntries(reader)
  ) {
    children = children.concat(batch);
  }
  if (children.length === 0) {
    into.emptyFolders.push(path);
  }
  for (const child of children) {
    await walk(child, into, path);
  }
}

/**
 * The files and folders of a drop, with their trees. The entries must be
 * taken during the event (the browser empties `dataTransfer` after it), so
 * call this from the drop handler itself.
 */
export function droppedEntries(event: DragEvent): Promise<IPicked> {
  const items = Array.from(event.dataTransfer?.items ?? []);
  const entries = items
    .filter(item => item.kind === 'file')
    .map(item => item.webkitGetAsEntry?.() ?? null);
  const loose = Array.from(event.dataTransfer?.files ?? []);
  return (async () => {
    const picked: IPicked = { files: [], emptyFolders: [] };
    if (entries.every(entry => entry === null)) {
      picked.files = loose.map(file => ({ path: file.name, file }));
      return picked;
    }
    for (const entry of entries) {
      if (entry) {
        await walk(entry, picked, '');
      }
    }
    return picked;
  })();
}
