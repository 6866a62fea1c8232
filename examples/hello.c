/* printf, argv and environ; exits with status 3. */
#include <stdio.h>

extern char **environ;

int main(int argc, char **argv)
{
	printf("Hello from UKL's test program!\n");
	for (int i = 0; i < argc; i++)
		printf("argv[%d] = %s\n", i, argv[i]);
	for (char **e = environ; *e; e++)
		printf("env: %s\n", *e);
	return 3;
}
