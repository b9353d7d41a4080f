/* main.c - heptasim's entry point: the standard descriptors made safe,
 * the data directory checked, the command line handed to the CLI, and
 * stdout checked at the end. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"

/* A closed descriptor 0, 1 or 2 is reopened on /dev/null, read-only: no
 * file heptasim or SimGrid opens can take it (a log or a trace would go to
 * "stdout"), and a write to a closed stdout still fails (EBADF) and is
 * reported. */
static void standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int got = open("/dev/null", O_RDONLY);
        if (got >= 0 && got != fd) {
            dup2(got, fd);
            close(got);
        }
    }
}

/* The summary, tables or JSON a command wrote on stdout must have got
 * there: a write error (a full disk, a closed descriptor) is exit 1. */
static int stdout_status(int status)
{
    errno = 0;
    bool failed = fflush(stdout) != 0;
    int e = errno;
    failed = failed || ferror(stdout);
    if (!failed || status != 0) return status; /* a failed command said why in its one line */
    if (e == 0 && write(STDOUT_FILENO, "\n", 1) < 0) e = errno; /* the output is broken already: ask why */
    if (e == 0 && fcntl(STDOUT_FILENO, F_GETFL) != -1 && (fcntl(STDOUT_FILENO, F_GETFL) & O_ACCMODE) == O_RDONLY)
        e = EBADF; /* closed, reopened on /dev/null by standard_fds */
    fprintf(stderr, "heptasim: stdout: cannot write the output: %s (check free space, or that stdout is open)\n",
            e ? strerror(e) : "a write failed");
    return 1;
}

int main(int argc, char **argv)
{
    standard_fds();
    /* past a file size limit, a write fails (EFBIG) and is reported
     * instead of the process being killed half-way through a file */
    signal(SIGXFSZ, SIG_IGN);
    /* to a file or pipe, the output stays in one buffer until the end, so
     * that a write error is seen with its reason at the final flush */
    static char buf[1 << 20];
    if (!isatty(STDOUT_FILENO)) setvbuf(stdout, buf, _IOFBF, sizeof buf);
    sim_err err;
    sim_rc rc = cfg_data_check(&err);
    if (rc != SIM_OK) return stdout_status(cli_fail(rc, &err));
    return stdout_status(cli_main(argc, argv));
}
