/*
 * runtrail-sandbox-launch: the last host-side step before bubblewrap. It reads bubblewrap's
 * arguments from a file the server wrote (so the command's environment never sits in a host
 * process's environment or command line), opens the run's own folders while it still may (binds
 * given as `--launch-bind SRC DEST` / `--launch-ro-bind SRC DEST` become `--bind-fd`/`--ro-bind-fd`,
 * opened with no symlink anywhere in SRC), builds the system-call filter, becomes the sandbox's
 * unprivileged user when one is named (a server running as root), joins a fresh anonymous session
 * keyring and executes bubblewrap with a fixed environment.
 *
 * usage: runtrail-sandbox-launch UID|- GID|- ARGS-FILE BWRAP COMMAND [ARG…]
 * ARGS-FILE holds bubblewrap's options (NUL-separated); the command stays on the command line, where
 * bubblewrap wants it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp-filter.h"

#define MAX_ARGS_BYTES (64 * 1024 * 1024)

static void die(const char *what, const char *detail) {
  /* the `bwrap: ` prefix is what the server reads as "the sandbox could not start" */
  fprintf(stderr, "bwrap: %s%s%s: %s\n", what, detail ? " " : "", detail ? detail : "", strerror(errno));
  exit(1);
}

static char *read_all(int fd, size_t *len) {
  size_t cap = 16384, n = 0;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  for (;;) {
    if (n == cap) {
      if (cap >= MAX_ARGS_BYTES) { errno = E2BIG; free(buf); return NULL; }
      cap *= 2;
      char *grown = realloc(buf, cap);
      if (!grown) { free(buf); return NULL; }
      buf = grown;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) { free(buf); return NULL; }
    if (r == 0) break;
    n += (size_t)r;
  }
  *len = n;
  return buf;
}

/* An O_PATH descriptor of `path` (absolute, already resolved by the server) refusing any symlink on the way. */
static int open_bind_source(const char *path) {
  struct open_how how = {.flags = O_PATH, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd < 0 && errno == ENOSYS) fd = open(path, O_PATH | O_NOFOLLOW);
  return fd;
}

/*
 * Where the run's folders are shown to bubblewrap when it runs as the sandbox user: that user may
 * not pass through the folders above them (a data dir is its owner's only), so this process, still
 * root, mounts each one on a folder of its own under a tmpfs here, in a mount namespace of its own
 * that bubblewrap starts from (nothing of it is seen on the host, and it ends with the sandbox).
 */
static const char STAGE[] = "/run/runtrail-sandbox";

static void open_stage(void) {
  struct stat st;
  if (lstat(STAGE, &st) != 0) {
    if (errno != ENOENT || mkdir(STAGE, 0755) != 0) die("could not make", STAGE);
    if (lstat(STAGE, &st) != 0) die("could not make", STAGE);
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0) { errno = EPERM; die("not a folder of root's:", STAGE); }
  if (unshare(CLONE_NEWNS) != 0) die("could not make a mount namespace for the sandbox's folders", NULL);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("could not make the mount namespace private", NULL);
  if (mount("runtrail-sandbox", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0) die("could not mount a tmpfs on", STAGE);
}

static void stage(int fd, const char *where) {
  struct stat st;
  if (fstat(fd, &st) != 0) die("can't stat bind source", where);
  if (S_ISDIR(st.st_mode)) {
    if (mkdir(where, 0755) != 0) die("could not make", where);
  } else {
    int f = open(where, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (f < 0) die("could not make", where);
    close(f);
  }
  char from[64];
  snprintf(from, sizeof from, "/proc/self/fd/%d", fd);
  if (mount(from, where, NULL, MS_BIND | MS_REC, NULL) != 0) die("could not mount the bind source on", where);
}

static void append(int out, const char *arg) {
  size_t len = strlen(arg) + 1;
  if (write(out, arg, len) != (ssize_t)len) die("could not pass the sandbox's arguments", NULL);
}

static unsigned long parse_id(const char *s, const char *what) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || end == s) { errno = EINVAL; die(what, s); }
  return v;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s UID|- GID|- ARGS-FILE BWRAP COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  int switching = strcmp(argv[1], "-") != 0;
  uid_t uid = switching ? (uid_t)parse_id(argv[1], "bad sandbox uid") : getuid();
  gid_t gid = switching ? (gid_t)parse_id(argv[2], "bad sandbox gid") : getgid();
  if (switching && uid == 0) { errno = EINVAL; die("the sandbox user may not be root", NULL); }

  int in = open(argv[3], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) die("could not read the sandbox's arguments", argv[3]);
  unlink(argv[3]);
  size_t len = 0;
  char *text = read_all(in, &len);
  if (!text) die("could not read the sandbox's arguments", argv[3]);
  close(in);
  if (len > 0 && text[len - 1] != '\0') { errno = EINVAL; die("the sandbox's arguments do not end in NUL", NULL); }

  int seccomp = sandbox_seccomp_fd();
  if (seccomp < 0) die("could not build the seccomp filter", NULL);
  int out = memfd_create("runtrail-bwrap-args", 0);
  if (out < 0) die("could not pass the sandbox's arguments", NULL);
  char num[32];
  snprintf(num, sizeof num, "%d", seccomp);
  append(out, "--seccomp");
  append(out, num);

  int staged = 0;
  for (size_t i = 0; i < len;) {
    const char *arg = text + i;
    i += strlen(arg) + 1;
    int rw = strcmp(arg, "--launch-bind") == 0;
    int ro = strcmp(arg, "--launch-ro-bind") == 0;
    if (strcmp(arg, "--") == 0) { errno = EINVAL; die("the command belongs on the command line, not in", argv[3]); }
    if (!rw && !ro) {
      append(out, arg);
      continue;
    }
    if (i >= len) { errno = EINVAL; die("bind without a source", NULL); }
    const char *src = text + i;
    i += strlen(src) + 1;
    if (i >= len) { errno = EINVAL; die("bind without a destination", src); }
    const char *dest = text + i;
    i += strlen(dest) + 1;
    if (!switching) {
      /* bubblewrap opens it with the same rights this process has */
      append(out, rw ? "--bind" : "--ro-bind");
      append(out, src);
      append(out, dest);
      continue;
    }
    /* opened inside the new namespace: a mount of another namespace cannot be bound */
    if (staged == 0) open_stage();
    int fd = open_bind_source(src);
    if (fd < 0) {
      /* a read-only cover over something that is gone protects nothing; a writable root must exist */
      if (ro && errno == ENOENT) continue;
      die("can't open bind source", src);
    }
    char stage_path[64];
    snprintf(stage_path, sizeof stage_path, "%s/%d", STAGE, staged++);
    stage(fd, stage_path);
    close(fd);
    append(out, rw ? "--bind" : "--ro-bind");
    append(out, stage_path);
    append(out, dest);
  }
  free(text);
  if (lseek(out, 0, SEEK_SET) != 0) die("could not pass the sandbox's arguments", NULL);

  if (switching) {
    if (setgroups(0, NULL) != 0) die("could not drop supplementary groups", NULL);
    if (setresgid(gid, gid, gid) != 0) die("could not become the sandbox group", argv[2]);
    if (setresuid(uid, uid, uid) != 0) die("could not become the sandbox user", argv[1]);
    if (getuid() != uid || geteuid() != uid || getegid() != gid) { errno = EPERM; die("the sandbox user did not stick", argv[1]); }
    /* a uid change makes the process undumpable, and then its own /proc/self/fd (through which
       bubblewrap binds the descriptors) is root's; nothing of root's is left in it to protect */
    if (prctl(PR_SET_DUMPABLE, 1) != 0) die("could not make the launcher dumpable", NULL);
  }
  /* a keyring of its own: the server's session keyring is not inherited (kernels without keys: nothing to leave) */
  if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS) die("could not join a fresh session keyring", NULL);

  snprintf(num, sizeof num, "%d", out);
  /* bwrap --args N -- COMMAND…: argv[5..] and its NULL reused in place */
  char *bwrap = argv[4];
  char **bwrap_argv = argv + 1;
  bwrap_argv[0] = bwrap;
  bwrap_argv[1] = "--args";
  bwrap_argv[2] = num;
  bwrap_argv[3] = "--";
  char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
  execve(bwrap, bwrap_argv, env);
  die("could not start", bwrap);
  return 1;
}
