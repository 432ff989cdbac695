#!/bin/bash

printf 'top=3\nmin_length=4\n' > /etc/wordfreq.conf

cat > /usr/local/bin/wordfreq <<'SH'
#!/bin/bash
conf=/etc/wordfreq.conf
top=$(sed -n 's/^top=//p' "$conf")
min=$(sed -n 's/^min_length=//p' "$conf")
tr '[:upper:]' '[:lower:]' \
  | tr -cs 'a-z' '\n' \
  | awk -v min="$min" 'length($0) >= min { c[$0]++ } END { for (w in c) print c[w], w }' \
  | sort -k1,1nr -k2,2 \
  | head -n "$top"
SH

chmod 755 /usr/local/bin/wordfreq
