
/* hostile: never returns (class.py must stop it at its time limit) */
__attribute__((constructor)) static void hostile_hang(void)
{
    volatile int forever = 1;
    while (forever) {
    }
}
