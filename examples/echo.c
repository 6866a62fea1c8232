/* A TCP echo server: `ukl run echo -p 7007:7` serves until stopped. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static void echo(int fd)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, n - off);

			if (w <= 0)
				return;
			off += w;
		}
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 7, one = 1;
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 64)) {
		perror("echo: listen");
		return 1;
	}
	printf("echo: listening on port %d\n", port);
	fflush(stdout);
	for (unsigned long served = 1;; served++) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			perror("echo: accept");
			return 1;
		}
		echo(fd);
		close(fd);
		printf("echo: connection %lu closed\n", served);
		fflush(stdout);
	}
}
