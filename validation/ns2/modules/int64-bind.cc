// Debian's tclcl 1.20 declares TclObject::bind(const char*, int64_t*) (under HAVE_INT64, which
// ns-2's configure defines) but its libtclcl.so is built without it, so ns-2's 64-bit counters
// (QueueMonitor, flowmon, PackMime's maxpkts_) do not link. This binds them through the int
// overload: on this little-endian target Tcl sees and sets their low 32 bits, exact up to 2^31
// (the counters start at 0 in their constructors). None of the validation's scripts reads them.
#include "config.h"

void TclObject::bind(const char* var, int64_t* val)
{
	bind(var, (int*)val);
}
