/* check_run.h - the main of every Check suite: run it, exit 0 when every
 * test passed, 1 otherwise. */
#ifndef HEPTASIM_TESTS_CHECK_RUN_H
#define HEPTASIM_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s)
{
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
