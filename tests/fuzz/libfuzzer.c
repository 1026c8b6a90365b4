/*
 * libfuzzer.c -- the libFuzzer entry point around one target, chosen at compile time with
 * -DFUZZ_ENTRY=fuzz_<name> (see fuzz.h and run.sh).
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#ifndef FUZZ_ENTRY
#error "compile with -DFUZZ_ENTRY=fuzz_<name>"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return FUZZ_ENTRY(data, size);
}
