#!/usr/bin/perl
# Checks /app/out/payroll.csv against the expected payroll (exact strings), using core
# Perl only. The output is read as data; nothing from /app is executed.
use strict;
use warnings;

my $OUT = '/app/out/payroll.csv';
my @HEADER = qw(employee_id name regular_hours overtime_hours gross_pay);
my @EXPECTED = (
    ['E02', "Tom\xc3\xa1s Ortega", '75.00', '6.50', '1983.15'],
    ['E05', 'Lena Brandt',         '35.75', '0.00', '713.21'],
    ['E07', 'Priya Nair',          '79.50', '4.75', '2698.37'],
    ['E09', 'Sam Whitlock',        '0.00',  '0.00', '0.00'],
    ['E11', 'Okafor, Chidi',       '80.00', '5.25', '2442.93'],
);
my @fail;

# Parse one CSV record (RFC 4180 quoting: "a,b", "" inside quotes). undef if malformed.
sub parse_csv_line {
    my ($line) = @_;
    my @fields;
    my $pos = 0;
    my $len = length $line;
    while (1) {
        my $field = '';
        if ($pos < $len && substr($line, $pos, 1) eq '"') {
            $pos++;
            while (1) {
                return undef if $pos >= $len;
                my $c = substr($line, $pos, 1);
                if ($c eq '"') {
                    if ($pos + 1 < $len && substr($line, $pos + 1, 1) eq '"') {
                        $field .= '"';
                        $pos += 2;
                    } else {
                        $pos++;
                        last;
                    }
                } else {
                    $field .= $c;
                    $pos++;
                }
            }
            # only spaces may follow a closing quote before the separator
            while ($pos < $len && substr($line, $pos, 1) eq ' ') { $pos++ }
            return undef if $pos < $len && substr($line, $pos, 1) ne ',';
        } else {
            my $next = index($line, ',', $pos);
            $next = $len if $next < 0;
            $field = substr($line, $pos, $next - $pos);
            return undef if $field =~ /"/;
            $pos = $next;
        }
        $field =~ s/^\s+|\s+$//g;
        push @fields, $field;
        last if $pos >= $len;
        $pos++;    # skip the comma
        if ($pos == $len) { push @fields, ''; last }
    }
    return \@fields;
}

sub slurp {
    my ($path) = @_;
    open(my $fh, '<:raw', $path) or return undef;
    local $/;
    my $data = <$fh>;
    close $fh;
    return $data;
}

my $text = slurp($OUT);
if (!defined $text) {
    push @fail, "$OUT cannot be read: $!";
} else {
    my @lines = grep { /\S/ } map { s/\r$//r } split /\n/, $text;
    my @rows;
    for my $i (0 .. $#lines) {
        my $r = parse_csv_line($lines[$i]);
        if (!defined $r) { push @fail, "line " . ($i + 1) . " is not valid CSV: $lines[$i]"; next }
        push @rows, $r;
    }
    if (!@fail) {
        my $hdr = shift @rows;
        if (!$hdr || join(',', @$hdr) ne join(',', @HEADER)) {
            push @fail, "header is '" . join(',', @{ $hdr // [] }) . "', expected '" . join(',', @HEADER) . "'";
        }
        if (@rows != @EXPECTED) {
            push @fail, scalar(@rows) . " data rows, expected " . scalar(@EXPECTED);
        }
        for my $i (0 .. $#EXPECTED) {
            my $want = $EXPECTED[$i];
            my $got = $rows[$i] or last;
            my $g = join('|', @$got);
            my $w = join('|', @$want);
            push @fail, "row " . ($i + 1) . ": got '$g', expected '$w'" if $g ne $w;
        }
    }
}

for my $pair (['/app/data/employees.csv', '/tests/employees.orig.csv'],
              ['/app/data/timesheets.csv', '/tests/timesheets.orig.csv']) {
    my ($live, $orig) = @$pair;
    my ($a, $b) = (slurp($live), slurp($orig));
    if (!defined $a) { push @fail, "$live is missing" }
    elsif (!defined $b) { push @fail, "verifier copy $orig is missing" }
    elsif ($a ne $b) { push @fail, "$live was modified" }
}

if (@fail) {
    print "FAIL: $_\n" for @fail;
    exit 1;
}
print "PASS\n";
exit 0;
