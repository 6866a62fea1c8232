/* Optional modules, as servers load them: the program works without one. */
#include <dlfcn.h>
#include <stddef.h>
#include "stats.h"

const char *load_plugin(const char *path)
{
	void *handle = dlopen(path, RTLD_NOW);

	if (!handle)
		return dlerror();
	return dlsym(handle, "plugin_init") ? "loaded" : dlerror();
}
