/* The sandbox's system-call filter (seccomp-filter.c): its BPF in a memory file, for bwrap --seccomp. */
#ifndef RUNTRAIL_SECCOMP_FILTER_H
#define RUNTRAIL_SECCOMP_FILTER_H

/* A readable fd positioned at the filter's start (not close-on-exec), or -1 with errno set. */
int sandbox_seccomp_fd(void);

#endif
