#!/bin/bash
set -e
cd /app

# Fix the encoder: compare bytes as unsigned values, cap runs at 255, flush the last run
/usr/local/bin/python3 - <<'PY'
from pathlib import Path
src = Path("/app/rle.c")
text = src.read_text()
start = text.index("static int encode(")
end = text.index("static int decode(")
text = text[:start] + r'''static int encode(FILE *in, FILE *out)
{
    int prev = 0;
    int count = 0;
    int c;

    while ((c = fgetc(in)) != EOF) {
        if (count > 0 && c == prev && count < 255) {
            count++;
        } else {
            if (count > 0) {
                fputc(count, out);
                fputc(prev, out);
            }
            prev = c;
            count = 1;
        }
    }
    if (count > 0) {
        fputc(count, out);
        fputc(prev, out);
    }
    return 0;
}

''' + text[end:]
src.write_text(text)
PY

# Fix the decoder: reject a truncated pair and a zero count, then build and smoke-test
/usr/local/bin/python3 - <<'PY'
from pathlib import Path
src = Path("/app/rle.c")
text = src.read_text()
start = text.index("static int decode(")
end = text.index("int main(")
text = text[:start] + r'''static int decode(FILE *in, FILE *out)
{
    int n, c;

    while ((n = fgetc(in)) != EOF) {
        c = fgetc(in);
        if (c == EOF) {
            fprintf(stderr, "rle: truncated input: count without value\n");
            return 1;
        }
        if (n == 0) {
            fprintf(stderr, "rle: invalid pair with count 0\n");
            return 1;
        }
        for (int i = 0; i < n; i++)
            fputc(c, out);
    }
    return 0;
}

''' + text[end:]
src.write_text(text)
PY
gcc -O2 -Wall -o /tmp/rle /app/rle.c
head -c 600 /dev/zero | tr '\0' 'A' | /tmp/rle -e | od -An -tu1
printf 'hello\377\377\377world' | /tmp/rle -e | /tmp/rle -d | od -c
