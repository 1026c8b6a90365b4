/*
 * cmd_version.c -- 'paraplan version': the version, the libraries built against and the
 * optional GPU features compiled in.
 */
#include "config.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <gsl/gsl_version.h>
#include <sqlite3.h>
#include <string.h>

int
cmd_version(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: paraplan version\n\nPrints the version, the libraries and the optional features built in.\n");
		return 0;
	}
	if (argc > 1 && argv[1][0] != '\0')
		return cli_usage("version", "unexpected argument \"%s\"", argv[1]);
	printf("paraplan %s\n", PACKAGE_VERSION);
	printf("sqlite %s, gsl %s, cJSON %s, hardware schema %d\n", sqlite3_libversion(), GSL_VERSION, cJSON_Version(),
	       HW_SCHEMA_VERSION);
#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
	printf("GPU calibration and replay: built (CUDA, NCCL%s)\n",
#ifdef HAVE_MPI
	       ", MPI"
#else
	       ""
#endif
	);
#else
	printf("GPU calibration and replay: not built (needs CUDA and NCCL at configure time)\n");
#endif
	return 0;
}
