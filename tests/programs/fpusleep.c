/*
 * A value in an SSE register across a read() that sleeps while another
 * process fills the same register: each process has its own registers, so
 * the value is still there when the read returns (the kernel loads the
 * sleeper's registers back on its way out of the call).
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 20

/* read(fd, &c, 1) with VALUE in xmm7 around it; what xmm7 holds after */
static unsigned long read_keeping_xmm7(int fd, unsigned long value, long *ret)
{
	unsigned long out;
	char c;

	__asm__ volatile("movq %[v], %%xmm7\n\t"
			 "syscall\n\t"
			 "movq %%xmm7, %[out]"
			 : [out] "=r"(out), "=a"(*ret)
			 : [v] "r"(value), "a"(0L), "D"((long)fd), "S"(&c), "d"(1L)
			 : "rcx", "r11", "memory", "xmm7");
	return out;
}

int main(void)
{
	int kept = 0, slept = 0;

	for (int i = 0; i < ROUNDS; i++) {
		unsigned long mine = 0x1111111111111111UL * (i % 7 + 1), got;
		int p[2];
		long r;

		pipe(p);
		if (fork() == 0) {		/* runs while the parent sleeps */
			for (long n = 0; n < 200000; n++)
				__asm__ volatile("movq %0, %%xmm7" : : "r"(~mine) : "xmm7");
			write(p[1], "x", 1);
			_exit(0);
		}
		got = read_keeping_xmm7(p[0], mine, &r);
		slept += r == 1;
		kept += got == mine;
		wait(NULL);
		close(p[0]);
		close(p[1]);
	}
	printf("%d reads slept while another process used xmm7; xmm7 kept across %d\n",
	       slept, kept);
	return 0;
}
