/* glibc's name for the thread a SIGEV_THREAD_ID timer signals, which
 * timers/posix_timers uses: musl calls the same union member
 * sigev_notify_thread_id (and defines that name as a macro reaching into
 * its own union). */
#include <signal.h>
#undef sigev_notify_thread_id
#define _sigev_un __sev_fields
#define _tid sigev_notify_thread_id
