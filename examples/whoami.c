/* Who the program runs as: its ids, its groups, what /proc says, and the
 * owner of a file it creates (in the directory given, e.g. a volume). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    gid_t groups[8];
    int n = getgroups(8, groups);
    printf("uid %d euid %d gid %d egid %d groups", getuid(), geteuid(), getgid(), getegid());
    for (int i = 0; i < n; i++)
        printf(" %d", groups[i]);
    printf("\n");

    char line[256];
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (!strncmp(line, "Uid:", 4) || !strncmp(line, "Gid:", 4))
            fputs(line, stdout);

    if (argc > 1) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/made-by-whoami", argv[1]);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || fstat(fd, &st)) {
            perror(path);
            return 1;
        }
        printf("created a file owned by %d:%d\n", (int)st.st_uid, (int)st.st_gid);
    }
    return 0;
}
