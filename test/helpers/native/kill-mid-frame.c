// LD_PRELOAD shim for crash tests: SIGKILLs its process between the two
// writes SQLite makes of one write-ahead frame (the 24-byte frame header,
// then the page), so the file ends in a commit cut short exactly as a crash
// leaves it. Armed by a file: once the path in TALLY_KILL_MID_FRAME_ARM
// exists, the next page write that follows a frame header on a "-wal" file
// kills the process instead. Built by test/helpers/kill-mid-frame.ts.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static const size_t frameHeaderBytes = 24;
static int headerFd = -1;
static off_t headerEnd = -1;

static int isWalFile(int fd) {
  char link[64];
  char target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t length = readlink(link, target, sizeof target - 1);
  if (length < 4) return 0;
  target[length] = '\0';
  return strcmp(target + length - 4, "-wal") == 0;
}

static int armed(void) {
  const char *arm = getenv("TALLY_KILL_MID_FRAME_ARM");
  return arm != NULL && access(arm, F_OK) == 0;
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
  static ssize_t (*realPwrite64)(int, const void *, size_t, off_t) = NULL;
  if (realPwrite64 == NULL) realPwrite64 = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  if (fd == headerFd && offset == headerEnd && armed()) {
    // The header is on the disk's page cache, the page is not: die here.
    kill(getpid(), SIGKILL);
    pause();
  }
  ssize_t written = realPwrite64(fd, buf, count, offset);
  if (count == frameHeaderBytes && written == (ssize_t)count && isWalFile(fd)) {
    headerFd = fd;
    headerEnd = offset + (off_t)count;
  } else if (fd == headerFd) {
    headerFd = -1;
  }
  return written;
}
