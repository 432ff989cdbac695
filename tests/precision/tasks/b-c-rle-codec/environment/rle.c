/*
 * rle - byte-oriented run-length codec.
 *
 *   rle -e   encode standard input to standard output
 *   rle -d   decode standard input to standard output
 *
 * Encoded format: a sequence of (count, value) byte pairs, 1 <= count <= 255.
 */
#include <stdio.h>
#include <string.h>

static int encode(FILE *in, FILE *out)
{
    char prev = 0;
    int count = 0;
    int c;

    while ((c = fgetc(in)) != EOF) {
        if (count > 0 && c == prev && count < 256) {
            count++;
        } else {
            if (count > 0) {
                fputc(count, out);
                fputc(prev, out);
            }
            prev = (char)c;
            count = 1;
        }
    }
    return 0;
}

static int decode(FILE *in, FILE *out)
{
    int n, c;

    while ((n = fgetc(in)) != EOF) {
        c = fgetc(in);
        for (int i = 0; i < n; i++)
            fputc(c, out);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "-e") != 0 && strcmp(argv[1], "-d") != 0)) {
        fprintf(stderr, "usage: %s -e|-d < input > output\n", argv[0]);
        return 2;
    }
    int rc = (argv[1][1] == 'e') ? encode(stdin, stdout) : decode(stdin, stdout);
    if (fflush(stdout) != 0)
        return 1;
    return rc;
}
