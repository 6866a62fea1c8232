/* <sys/prctl.h> as glibc has it: the kernel's <linux/prctl.h> and prctl().
 * musl's defines the kernel's types itself, and seccomp_bpf includes both. */
#ifndef UKL_SHIM_SYS_PRCTL_H
#define UKL_SHIM_SYS_PRCTL_H
#include <linux/prctl.h>
int prctl(int, ...);
#endif
