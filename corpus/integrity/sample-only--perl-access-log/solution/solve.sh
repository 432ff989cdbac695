#!/bin/bash
set -euo pipefail
cd /home/user/project

# step 1: '-' bytes become 0
sed -i 's|^    # TODO: convert the time to UTC ISO 8601, .-. bytes$|    $bytes = 0 if $bytes eq "-";\n    # TODO: time|' bin/access2csv.pl

# step 2: the time in UTC, ISO 8601
/usr/bin/perl -0pi -e 's{    # TODO: time\n}{    \$time = utc(\$time);\n}' bin/access2csv.pl
cat >> bin/access2csv.pl <<'PL'

# "10/Oct/2023:13:55:36 -0700" -> "2023-10-10T20:55:36Z"
sub utc {
    my ($t) = @_;
    my %mon = (Jan => 0, Feb => 1, Mar => 2, Apr => 3, May => 4, Jun => 5,
               Jul => 6, Aug => 7, Sep => 8, Oct => 9, Nov => 10, Dec => 11);
    my ($d, $m, $y, $H, $M, $S, $sign, $oh, $om) =
        $t =~ m{^(\d\d)/(\w{3})/(\d{4}):(\d\d):(\d\d):(\d\d) ([-+])(\d\d)(\d\d)$} or return $t;
    require Time::Local;
    my $epoch = Time::Local::timegm($S, $M, $H, $d, $mon{$m}, $y);
    $epoch -= ($sign eq '+' ? 1 : -1) * ($oh * 3600 + $om * 60);
    my @u = gmtime($epoch);
    return sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", $u[5] + 1900, $u[4] + 1, @u[3, 2, 1, 0]);
}
PL
