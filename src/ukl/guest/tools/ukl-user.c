/* `ukl run --user` for an ordinary program: become UID:GID with the
 * supplementary groups given, then execute the program, as setpriv
 * --reuid --regid --groups does (busybox's setpriv cannot).  A UKL program
 * is not started this way: its exec needs the launcher's privileges, and its
 * C library becomes the user (UKL_USER) after the exec. */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	gid_t groups[32];
	size_t n = 0;
	char *s, *end;

	if (argc < 5) {
		fprintf(stderr, "usage: ukl-user UID GID GID[,GID...] PROGRAM [ARG...]\n");
		return 126;
	}
	for (s = argv[3]; n < 32 && *s; s = *end ? end + 1 : end)
		groups[n++] = strtoul(s, &end, 10);
	if (setgroups(n, groups) || setgid(strtoul(argv[2], NULL, 10)) ||
	    setuid(strtoul(argv[1], NULL, 10))) {
		perror("ukl-user");
		return 126;
	}
	execv(argv[4], argv + 4);
	perror(argv[4]);
	return 127;
}
