
/* hostile: touches 4 GiB, then holds it (class.py must stop it at its memory limit) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void hostile_memory(void)
{
    for (int i = 0; i < 64; i++) {
        char *p = (char *)malloc(64u << 20);
        if (p)
            memset(p, 1, 64u << 20);
    }
    for (;;)
        pause();
}
