/*
 * A global-heavy loop for comparing code models: a static hash table,
 * counters and a few small non-inlined functions, all reached through
 * their link-time addresses.  Used to choose where UKL application data
 * lives (docs/design.md, "Data model"); the result is counted in
 * instructions, so it is reproducible.
 */
#include <stdio.h>

#define SLOTS 4096

static unsigned keys[SLOTS], values[SLOTS];
static unsigned long hits, misses, probes;
unsigned seed = 12345;

__attribute__((noinline)) static unsigned next(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

__attribute__((noinline)) static void put(unsigned key, unsigned value)
{
	unsigned slot = key % SLOTS;

	while (keys[slot] && keys[slot] != key) {
		slot = (slot + 1) % SLOTS;
		probes++;
	}
	keys[slot] = key;
	values[slot] = value;
}

__attribute__((noinline)) static int get(unsigned key, unsigned *value)
{
	unsigned slot = key % SLOTS;

	while (keys[slot]) {
		if (keys[slot] == key) {
			*value = values[slot];
			hits++;
			return 1;
		}
		slot = (slot + 1) % SLOTS;
		probes++;
	}
	misses++;
	return 0;
}

int main(void)
{
	unsigned v, sum = 0;

	for (int i = 0; i < 2000000; i++) {
		unsigned k = next() % 3000 + 1;

		if (get(k, &v))
			sum += v;
		else
			put(k, i);
	}
	printf("hits %lu misses %lu probes %lu sum %u\n", hits, misses, probes, sum);
	return 0;
}
