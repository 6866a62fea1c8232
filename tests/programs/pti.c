/*
 * Page table isolation as a process sees it: the kernel's verdict on
 * Meltdown, and at CPL0 which copy of its page tables CR3 holds.  With PTI
 * a process's user copy lies 4096 bytes after its kernel copy, so bit 12 of
 * CR3 tells them apart; only CPL0 may read CR3.
 */
#include <stdio.h>

int main(void)
{
	char verdict[128] = "unknown\n";
	unsigned short cs;
	unsigned long cr3;
	FILE *f = fopen("/sys/devices/system/cpu/vulnerabilities/meltdown", "r");

	if (f && !fgets(verdict, sizeof(verdict), f))
		perror("meltdown");
	printf("meltdown: %s", verdict);
	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	if (cs & 3) {
		printf("CPL%u\n", cs & 3);
		return 0;
	}
	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	printf("CPL0 on the %s page tables\n", cr3 & (1UL << 12) ? "user" : "kernel");
	return 0;
}
