#!/usr/bin/env bash
# Build the small Linux VM image the VM-notebook tests and benchmark boot: a Debian
# kernel plus a busybox initramfs (seconds to boot under KVM), and an ext4 data disk
# as the base qcow2 of every test VM's copy-on-write disk.
#
# Made from Debian packages only (apt-get download; nothing is installed on the
# host), into a cache keyed on the package versions, so CI builds it once:
#   ~/.cache/cgu-lab/vm/<kernel version>-<busybox version>/
#       vmlinuz  initrd.img  disk.qcow2  vm.json
# vm.json is the image's manifest: a local environment whose prefix is this
# folder offers VM notebooks (cgu_lab/backends/local_qemu.py reads it).
#
# The guest boots with -kernel/-initrd (no bootloader in the disk: making one is
# slower than the whole test); its init loads the virtio, ext4, 9p and ACPI button
# modules, starts acpid (the power button powers it off), mounts the VM's disk
# (/dev/vda, kept across stops) on /mnt/disk and the notebook's home (9p tag
# "home") on /mnt/home, and starts a shell on the screen (tty1, what the console
# shows) and on the serial port.
#
# Prints the image folder on stdout. Needs: apt-get, dpkg-deb, gzip,
# mkfs.ext4 (e2fsprogs), qemu-img, python3.
set -euo pipefail

cache="${CGU_VM_CACHE:-$HOME/.cache/cgu-lab/vm}"
kernel_pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$kernel_pkg" ]; then
  echo "vm-test-image: apt knows no linux-image-amd64; run apt-get update" >&2
  exit 1
fi
kernel_version=$(apt-cache policy "$kernel_pkg" | awk '/Candidate:/ {print $2}')
busybox_version=$(apt-cache policy busybox-static | awk '/Candidate:/ {print $2}')
key="${kernel_pkg#linux-image-}_${kernel_version}_busybox_${busybox_version//:/-}"
out="$cache/$key"
if [ -f "$out/vm.json" ]; then
  echo "$out"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cgu-lab-vm-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/root"
# apt's sandbox user cannot write into a private temporary folder; the files are
# checked by apt against the signed package lists either way.
(cd "$work/debs" && apt-get download -q -o APT::Sandbox::User=root "$kernel_pkg" busybox-static >&2)
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
modules_dir=$(echo "$work"/root/lib/modules/*)

initramfs="$work/initramfs"
mkdir -p "$initramfs"/{bin,dev,proc,sys,mnt/disk,mnt/home,etc,modules,var/log}
cp "$work/root/bin/busybox" "$initramfs/bin/busybox"
# The modules the guest needs, dependencies first (read from each module's .modinfo).
python3 - "$modules_dir" "$initramfs/modules" virtio_pci virtio_blk crc32c_generic ext4 9pnet_virtio 9p button evdev <<'EOF'
import pathlib, re, shutil, sys

root, target, wanted = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
found = {p.name[:-3].replace("-", "_"): p for p in root.rglob("*.ko")}
order = []

def add(name):
    name = name.replace("-", "_")
    if name in order or name not in found:  # not a module: built into the kernel
        return
    info = re.search(rb"(?:^|\0)depends=([^\0]*)", found[name].read_bytes())
    for dep in (info.group(1).decode().split(",") if info else []):
        if dep:
            add(dep)
    order.append(name)

for name in wanted:
    add(name)
for index, name in enumerate(order):
    shutil.copy(found[name], target / f"{index:02d}-{name}.ko")
EOF

cat >"$initramfs/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for module in /modules/*.ko; do insmod "$module"; done
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/vda ] && break; sleep 0.1; done
mount -t ext4 /dev/vda /mnt/disk || echo "no VM disk"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 home /mnt/home || echo "no shared home"
echo "cgu-lab test VM ready" >/dev/ttyS0
exec init
EOF
chmod 755 "$initramfs/init"
cat >"$initramfs/etc/inittab" <<'EOF'
tty1::respawn:-/bin/sh
ttyS0::respawn:-/bin/sh
::respawn:/bin/acpid -f
::ctrlaltdel:/bin/poweroff -f
::shutdown:/bin/sync
::shutdown:/bin/umount -a -r
EOF
# An ACPI power button press (QMP system_powerdown, the backend's stop) powers the
# guest off cleanly through busybox's acpid and init, so the disk is synced.
mkdir -p "$initramfs/etc/acpi/PWRF"
printf '#!/bin/sh\nexec poweroff\n' >"$initramfs/etc/acpi/PWRF/00000080"
chmod 755 "$initramfs/etc/acpi/PWRF/00000080"
cat >"$initramfs/etc/profile" <<'EOF'
export PS1='vm# '
cd /mnt/disk 2>/dev/null || cd /
EOF
(cd "$initramfs" && find . | "$work/root/bin/busybox" cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.img"

mkdir -p "$work/disk/files"
echo "the VM's own disk: files here persist across stops" >"$work/disk/README"
truncate -s 256M "$work/disk.raw"
mkfs.ext4 -q -F -L cgu-vm -d "$work/disk" "$work/disk.raw"
qemu-img convert -q -f raw -O qcow2 "$work/disk.raw" "$work/disk.qcow2"

mkdir -p "$out.tmp"
cp "$modules_dir/../../../boot/vmlinuz-"* "$out.tmp/vmlinuz"
cp "$work/initrd.img" "$work/disk.qcow2" "$out.tmp/"
cat >"$out.tmp/vm.json" <<'EOF'
{
  "title": "Debian kernel + busybox (test VM)",
  "disk": "disk.qcow2",
  "format": "qcow2",
  "firmware": "bios",
  "kernel": "vmlinuz",
  "initrd": "initrd.img",
  "append": "console=ttyS0 console=tty1 panic=-1 quiet",
  "shared_folder": "home"
}
EOF
chmod -R a+rX "$out.tmp"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
