
/* hostile: writes 64 MiB files until 4 GiB, each under the file-size limit (class.py must stop it at its disk
 * limit), then holds */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void hostile_disk(void)
{
    static char block[1 << 20];
    memset(block, 7, sizeof block);
    for (int f = 0; f < 64; f++) {
        char name[32];
        snprintf(name, sizeof name, "fill-%02d.bin", f);
        FILE *o = fopen(name, "wb");
        for (int i = 0; o && i < 64; i++)
            fwrite(block, 1, sizeof block, o);
        if (o)
            fclose(o);
    }
    for (;;)
        pause();
}
