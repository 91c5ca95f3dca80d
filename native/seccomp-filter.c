/*
 * The sandbox's system-call filter, built with libseccomp and exported as BPF into a memory file
 * that bubblewrap loads (--seccomp FD) just before it runs the command. Everything is allowed except
 * what an ordinary command never needs and what reaches past the sandbox's own namespaces: kernel
 * modules and kexec, bpf, perf events, userfaultfd, io_uring, every form of mount, swap, reboot,
 * the kernel log, handle-based opens, attaching to another process with ptrace, keyrings other than
 * the sandbox's own session (the user's keyrings are shared by every run of that uid), request_key
 * (its upcall runs a program on the host), and TIOCSTI/TIOCLINUX (typing into a terminal).
 * A denied call fails with EPERM, as it would for an unprivileged user. Other architectures' calls
 * (32-bit entry on x86-64) kill the process: libseccomp's default for a foreign architecture.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/keyctl.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "seccomp-filter.h"

/* Calls denied whatever their arguments. Names unknown to this kernel's table are skipped. */
static const char *const DENIED[] = {
    "bpf", "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl", "quotactl_fd", "open_by_handle_at",
    "lookup_dcookie", "iopl", "ioperm", "uselib", "nfsservctl", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "request_key", "vm86", "vm86old",
};

/* Key serials of keyrings that are not the sandbox's own (linux/keyctl.h), compared on their low 32 bits. */
static const int FOREIGN_KEYRINGS[] = {KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING, KEY_SPEC_REQKEY_AUTH_KEY,
                                       KEY_SPEC_REQUESTOR_KEYRING};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int deny(scmp_filter_ctx ctx, int nr, unsigned count, const struct scmp_arg_cmp *cmp) {
  return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, count, cmp);
}

int sandbox_seccomp_fd(void) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return -1;
  int rc = 0;
  for (unsigned i = 0; i < N(DENIED) && rc == 0; i++) {
    int nr = seccomp_syscall_resolve_name(DENIED[i]);
    if (nr != __NR_SCMP_ERROR) rc = deny(ctx, nr, 0, NULL);
  }
  /* ptrace: a command may trace its own children (strace, a debugger's run); it may not attach */
  int ptrace_nr = seccomp_syscall_resolve_name("ptrace");
  if (rc == 0) rc = deny(ctx, ptrace_nr, 1, (struct scmp_arg_cmp[]){SCMP_A0(SCMP_CMP_EQ, PTRACE_ATTACH)});
  if (rc == 0) rc = deny(ctx, ptrace_nr, 1, (struct scmp_arg_cmp[]){SCMP_A0(SCMP_CMP_EQ, PTRACE_SEIZE)});
  /* keyrings: the fresh session keyring is the sandbox's; joining a named one (shared by name across runs) is not */
  int keyctl_nr = seccomp_syscall_resolve_name("keyctl");
  int add_key_nr = seccomp_syscall_resolve_name("add_key");
  if (rc == 0)
    rc = deny(ctx, keyctl_nr, 2,
              (struct scmp_arg_cmp[]){SCMP_A0(SCMP_CMP_EQ, KEYCTL_JOIN_SESSION_KEYRING), SCMP_A1(SCMP_CMP_NE, 0)});
  for (unsigned i = 0; i < N(FOREIGN_KEYRINGS) && rc == 0; i++) {
    scmp_datum_t serial = (scmp_datum_t)(unsigned int)FOREIGN_KEYRINGS[i];
    /* the keyring is keyctl's second or third argument (link, unlink, move…), add_key's fifth */
    rc = deny(ctx, keyctl_nr, 1, (struct scmp_arg_cmp[]){SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, serial)});
    if (rc == 0) rc = deny(ctx, keyctl_nr, 1, (struct scmp_arg_cmp[]){SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, serial)});
    if (rc == 0) rc = deny(ctx, keyctl_nr, 1, (struct scmp_arg_cmp[]){SCMP_A3(SCMP_CMP_MASKED_EQ, 0xffffffffu, serial)});
    if (rc == 0) rc = deny(ctx, add_key_nr, 1, (struct scmp_arg_cmp[]){SCMP_A4(SCMP_CMP_MASKED_EQ, 0xffffffffu, serial)});
  }
  /* typing into a terminal: the request number is an int, so only its low 32 bits count */
  int ioctl_nr = seccomp_syscall_resolve_name("ioctl");
  if (rc == 0) rc = deny(ctx, ioctl_nr, 1, (struct scmp_arg_cmp[]){SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)});
  if (rc == 0) rc = deny(ctx, ioctl_nr, 1, (struct scmp_arg_cmp[]){SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX)});

  int fd = -1;
  if (rc == 0) {
    fd = memfd_create("runtrail-seccomp", 0);
    if (fd < 0 || seccomp_export_bpf(ctx, fd) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  } else {
    errno = -rc;
  }
  seccomp_release(ctx);
  return fd;
}
