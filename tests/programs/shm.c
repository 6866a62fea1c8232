/* POSIX shared memory and a named semaphore between forked processes, as
 * PostgreSQL's dynamic shared memory and many servers use them: both live in
 * /dev/shm, which every Linux system mounts. */
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 4
#define ROUNDS 1000

int main(void)
{
    const char *name = "/ukl-example-shm";
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        perror("shm_open");
        return 1;
    }
    if (ftruncate(fd, sizeof(long)) < 0) {
        perror("ftruncate");
        return 1;
    }
    long *counter = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    sem_t *lock = sem_open("/ukl-example-sem", O_CREAT | O_EXCL, 0600, 1);
    if (counter == MAP_FAILED || lock == SEM_FAILED) {
        perror(counter == MAP_FAILED ? "mmap" : "sem_open");
        return 1;
    }
    for (int i = 0; i < CHILDREN; i++) {
        if (fork() == 0) {
            for (int r = 0; r < ROUNDS; r++) {
                sem_wait(lock);
                ++*counter;
                sem_post(lock);
            }
            _exit(0);
        }
    }
    int failed = 0, status;
    while (wait(&status) > 0)
        failed |= !WIFEXITED(status) || WEXITSTATUS(status);
    shm_unlink(name);
    sem_unlink("/ukl-example-sem");
    printf("%d processes added %ld through /dev/shm\n", CHILDREN, *counter);
    return failed || *counter != CHILDREN * ROUNDS;
}
