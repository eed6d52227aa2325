/* microbench/csv.c — RFC 4180 records with the line each starts on (csv.h). */
#include "microbench/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int csv_open(CsvReader *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->line = 1;
    if (!(r->f = fopen(path, "rb"))) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    /* a UTF-8 byte-order mark (spreadsheet exports) is not part of the first field */
    unsigned char bom[3];
    size_t got = fread(bom, 1, 3, r->f);
    if (!(got == 3 && bom[0] == 0xEF && bom[1] == 0xBB && bom[2] == 0xBF))
        rewind(r->f);
    return 0;
}

void csv_close(CsvReader *r)
{
    if (r->f)
        fclose(r->f);
    free(r->buf);
    memset(r, 0, sizeof *r);
}

static bool put(CsvReader *r, size_t *len, char c)
{
    if (*len + 1 >= r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        char *b = realloc(r->buf, cap);
        if (!b)
            return false;
        r->buf = b;
        r->cap = cap;
    }
    r->buf[(*len)++] = c;
    return true;
}

int csv_next(CsvReader *r, char *err, size_t errlen)
{
    for (;;) {
        size_t len = 0, start[CSV_FIELDS_MAX];
        int n = 0;
        bool quoted = false, after_quote = false, any = false;
        r->record_line = r->line;
        start[n++] = 0;
        int c;
        while ((c = getc(r->f)) != EOF) {
            any = true;
            if (c == '\0') {
                snprintf(err, errlen, "%s:%ld: a NUL byte: not a text CSV file", r->path, r->line);
                return -1;
            }
            if (quoted) {
                if (c == '"') {
                    int d = getc(r->f);
                    if (d == '"') {
                        if (!put(r, &len, '"'))
                            goto oom;
                        continue;
                    }
                    if (d != EOF)
                        ungetc(d, r->f);
                    quoted = false;
                    after_quote = true;
                    continue;
                }
                if (c == '\n')
                    r->line++;
                if (!put(r, &len, (char)c))
                    goto oom;
                continue;
            }
            if (c == '\r') {
                int d = getc(r->f);
                if (d != '\n' && d != EOF)
                    ungetc(d, r->f);
                c = '\n';
            }
            if (c == '\n') {
                r->line++;
                break;
            }
            if (c == ',') {
                if (!put(r, &len, '\0'))
                    goto oom;
                if (n == CSV_FIELDS_MAX) {
                    snprintf(err, errlen, "%s:%ld: more than %d fields", r->path, r->record_line, CSV_FIELDS_MAX);
                    return -1;
                }
                start[n++] = len;
                after_quote = false;
                continue;
            }
            if (after_quote) {
                snprintf(err, errlen, "%s:%ld: text after a closing quote in field %d", r->path, r->record_line,
                         n);
                return -1;
            }
            if (c == '"' && len == start[n - 1]) {
                quoted = true;
                continue;
            }
            if (!put(r, &len, (char)c))
                goto oom;
        }
        if (quoted) {
            snprintf(err, errlen, "%s:%ld: a quoted field is not closed before the end of the file", r->path,
                     r->record_line);
            return -1;
        }
        if (ferror(r->f)) {
            snprintf(err, errlen, "%s:%ld: read error: %s", r->path, r->line, strerror(errno));
            return -1;
        }
        if (!any)
            return 0;
        if (!put(r, &len, '\0'))
            goto oom;
        /* a blank line: one empty field and nothing quoted */
        if (n == 1 && r->buf[0] == '\0' && !after_quote) {
            if (c == EOF)
                return 0;
            continue;
        }
        for (int i = 0; i < n; i++)
            r->field[i] = r->buf + start[i];
        r->nfields = n;
        return 1;
    oom:
        snprintf(err, errlen, "%s:%ld: out of memory reading a record", r->path, r->record_line);
        return -1;
    }
}

int csv_column(const CsvReader *r, const char *name)
{
    for (int i = 0; i < r->nfields; i++) {
        const char *f = r->field[i];
        while (*f == ' ')
            f++;
        size_t n = strlen(f);
        while (n > 0 && f[n - 1] == ' ')
            n--;
        if (n == strlen(name) && strncmp(f, name, n) == 0)
            return i;
    }
    return -1;
}
