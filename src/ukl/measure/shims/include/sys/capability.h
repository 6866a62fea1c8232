/* The five libcap calls seccomp/seccomp_bpf makes, over capget() and
 * capset() for the calling thread: read its sets, read or change a flag
 * in them, write them back, free them. */
#ifndef UKL_SHIM_SYS_CAPABILITY_H
#define UKL_SHIM_SYS_CAPABILITY_H
#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef enum { CAP_EFFECTIVE, CAP_PERMITTED, CAP_INHERITABLE } cap_flag_t;
typedef enum { CAP_CLEAR, CAP_SET } cap_flag_value_t;
typedef int cap_value_t;
typedef struct __user_cap_data_struct *cap_t;	/* _LINUX_CAPABILITY_U32S_3 of them */

static inline cap_t cap_get_proc(void)
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
	cap_t caps = calloc(_LINUX_CAPABILITY_U32S_3, sizeof(*caps));

	if (caps && syscall(SYS_capget, &head, caps)) {
		free(caps);
		return NULL;
	}
	return caps;
}

static inline int cap_set_proc(cap_t caps)
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capset, &head, caps);
}

static inline int cap_free(void *caps)
{
	free(caps);
	return 0;
}

static inline __u32 *ukl_cap_word(cap_t caps, cap_value_t cap, cap_flag_t flag)
{
	struct __user_cap_data_struct *d = &caps[cap >> 5];

	return flag == CAP_EFFECTIVE ? &d->effective :
	       flag == CAP_PERMITTED ? &d->permitted : &d->inheritable;
}

static inline int cap_get_flag(cap_t caps, cap_value_t cap, cap_flag_t flag,
			       cap_flag_value_t *value)
{
	if (!caps || cap < 0 || cap > CAP_LAST_CAP) {
		errno = EINVAL;
		return -1;
	}
	*value = *ukl_cap_word(caps, cap, flag) & (1u << (cap & 31)) ? CAP_SET : CAP_CLEAR;
	return 0;
}

static inline int cap_set_flag(cap_t caps, cap_flag_t flag, int ncap,
			       const cap_value_t *list, cap_flag_value_t value)
{
	for (int i = 0; i < ncap; i++) {
		if (!caps || list[i] < 0 || list[i] > CAP_LAST_CAP) {
			errno = EINVAL;
			return -1;
		}
		if (value == CAP_SET)
			*ukl_cap_word(caps, list[i], flag) |= 1u << (list[i] & 31);
		else
			*ukl_cap_word(caps, list[i], flag) &= ~(1u << (list[i] & 31));
	}
	return 0;
}
#endif
