#ifndef STASH_CSQLITE_SHIM_H
#define STASH_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
