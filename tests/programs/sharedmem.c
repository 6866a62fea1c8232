/*
 * Who may write a UKL program's shared memory.  Its CPL0 code keeps a code
 * pointer in each shared page and calls it, as PostgreSQL keeps pointers
 * in its shared segment, so writing that memory takes what writing the
 * program's own memory takes (what insmod takes).
 *
 * An ordinary process (ukl-intruder, at CPL3) tries to rewrite the pointer:
 *  - as root without CAP_SYS_MODULE, and as root, by opening the
 *    program's MAP_SHARED page through /proc/PID/map_files and its memfd
 *    through /proc/PID/fd;
 *  - as nobody, through the objects' names: a /dev/shm object, a file and
 *    a SysV segment, all mode 0666, so that on Linux anyone may;
 *  - as nobody again, the other way round: it maps a file first, with its
 *    pointer in it, and the program then maps the same file; or it only
 *    holds the file open for writing, after writing its pointer; or it
 *    keeps only an io_uring fixed buffer of a /dev/shm object's page, and
 *    writes through it once the program has mapped the object;
 *  - as nobody, zeroing the program's file by path: open(O_TRUNC) and
 *    truncate(), then its length back.
 *
 * Each attempt is a section "== who", the intruder's "<way>: <result>"
 * lines (the program's own for the last), then the CPL at which the
 * intruder's choice ran, if it did.  On Linux each one is allowed, and the
 * choice runs at CPL3.  A forked child maps nothing new and shares all of
 * it, under UKL as on Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

typedef void (*hook_fn)(void);

static int ran_at = -1;
static hook_fn *volatile pages[5];

static void intact(void)
{
}

static void rewritten(void)
{
	unsigned short cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	ran_at = cs & 3;
}

/* Call the hook in each shared page, and say where the intruder's ran. */
static void report(void)
{
	for (int i = 0; i < 5; i++)
		if (pages[i] != MAP_FAILED) {
			if (*pages[i])
				(*pages[i])();
			else
				printf("the intruder zeroed a shared page\n");
			*pages[i] = intact;
		}
	if (ran_at >= 0)
		printf("the intruder's choice ran at CPL%d\n", ran_at);
	ran_at = -1;
	fflush(stdout);
}

static pid_t start(const char *who, char *const args[])
{
	pid_t child;

	printf("== %s\n", who);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execv("/bin/ukl-intruder", args);
		perror("exec ukl-intruder");
		_exit(127);
	}
	return child;
}

static void intrude(const char *who, const char *way, const char *target, const char *as)
{
	char value[32];
	char *args[] = { "ukl-intruder", "share", (char *)way, (char *)target, value,
			 (char *)as, NULL };
	int status;

	snprintf(value, sizeof(value), "%p", (void *)rewritten);
	waitpid(start(who, args), &status, 0);
	report();
}

static hook_fn *map_page(int fd)
{
	hook_fn *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (page != MAP_FAILED)
		*page = intact;
	return page;
}

/* A named object mode 0666, mapped shared and writable. */
static hook_fn *named(int fd)
{
	if (fd < 0 || fchmod(fd, 0666) || ftruncate(fd, PAGE))
		return MAP_FAILED;
	return map_page(fd);
}

/*
 * The intruder gets PATH first: it maps it (WAY keep) or holds it open
 * (hold), with its pointer written, or keeps only an io_uring pin of its
 * page (pin), through which it writes once this program has mapped PATH.
 */
static void theirs_first(const char *who, const char *way, const char *path)
{
	char value[32], ready[64];
	char *args[] = { "ukl-intruder", "share", (char *)way, (char *)path, value, "nobody",
			 NULL };
	hook_fn *page = MAP_FAILED;
	int fd, pin = !strcmp(way, "pin");
	pid_t child;

	snprintf(value, sizeof(value), "%p", (void *)rewritten);
	snprintf(ready, sizeof(ready), "%s.ready", path);
	child = start(who, args);
	while (access(ready, F_OK) && waitpid(child, NULL, WNOHANG) == 0)
		usleep(1000);
	fd = open(path, O_RDWR);
	if (fd >= 0) {
		page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	}
	printf("the program maps it: %s\n", page == MAP_FAILED ? strerror(errno) : "ok");
	if (pin && page != MAP_FAILED)
		*page = intact;
	kill(child, pin ? SIGUSR1 : SIGKILL);
	waitpid(child, NULL, 0);
	if (page != MAP_FAILED) {
		(*page)();
		munmap(page, PAGE);
	}
	unlink(path);
	report();
}

int main(void)
{
	char anon_link[64], memfd_link[64], sysv[16];
	int memfd, shm, status, shared = 0;
	pid_t child;

	pages[0] = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	*pages[0] = intact;
	memfd = memfd_create("ukl-shared", 0);
	pages[1] = memfd < 0 || ftruncate(memfd, PAGE) ? MAP_FAILED : map_page(memfd);
	pages[2] = named(shm_open("/ukl-shared", O_RDWR | O_CREAT | O_EXCL, 0666));
	pages[3] = named(open("/tmp/ukl-shared", O_RDWR | O_CREAT | O_EXCL, 0666));
	shm = shmget(IPC_PRIVATE, PAGE, IPC_CREAT | 0666);
	pages[4] = shm < 0 ? MAP_FAILED : shmat(shm, NULL, 0);
	if (pages[4] != MAP_FAILED)
		*pages[4] = intact;
	for (int i = 0; i < 5; i++)
		if (pages[i] == MAP_FAILED) {
			printf("shared page %d: %s\n", i, strerror(errno));
			return 1;
		}

	/* A forked child shares every page, as on Linux. */
	child = fork();
	if (child == 0) {
		for (int i = 0; i < 5; i++)
			*pages[i] = rewritten;
		_exit(0);
	}
	waitpid(child, &status, 0);
	for (int i = 0; i < 5; i++) {
		shared += *pages[i] == rewritten;
		*pages[i] = intact;
	}
	printf("a forked child wrote %d of 5 shared pages\n", shared);

	snprintf(anon_link, sizeof(anon_link), "/proc/%d/map_files/%lx-%lx", (int)getpid(),
		 (unsigned long)pages[0], (unsigned long)pages[0] + PAGE);
	snprintf(memfd_link, sizeof(memfd_link), "/proc/%d/fd/%d", (int)getpid(), memfd);
	snprintf(sysv, sizeof(sysv), "%d", shm);
	intrude("root without CAP_SYS_MODULE, through map_files", "path", anon_link, "nomodule");
	intrude("root without CAP_SYS_MODULE, through fd", "path", memfd_link, "nomodule");
	intrude("nobody, through /dev/shm", "path", "/dev/shm/ukl-shared", "nobody");
	intrude("nobody, through a file", "path", "/tmp/ukl-shared", "nobody");
	intrude("nobody, through SysV shm", "sysv", sysv, "nobody");
	intrude("nobody, truncating a file", "truncate", "/tmp/ukl-shared", "nobody");
	theirs_first("nobody, mapping a file before the program", "keep", "/tmp/ukl-theirs");
	theirs_first("nobody, holding a file open for writing", "hold", "/tmp/ukl-held");
	theirs_first("nobody, pinning a /dev/shm page before the program", "pin",
		     "/dev/shm/ukl-pinned");
	intrude("root, through map_files", "path", anon_link, "root");
	intrude("root, through fd", "path", memfd_link, "root");
	shm_unlink("/ukl-shared");
	unlink("/tmp/ukl-shared");
	shmctl(shm, IPC_RMID, NULL);
	return 0;
}
