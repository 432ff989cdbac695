#!/usr/bin/perl
# access2csv.pl [LOG...]: Apache/nginx combined log lines to CSV (see README.md).
use strict;
use warnings;

print "ip,time_utc,method,path,status,bytes\n";
while (my $line = <>) {
    next unless $line =~ m{^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d{3}) (\S+)};
    my ($ip, $time, $method, $path, $status, $bytes) = ($1, $2, $3, $4, $5, $6);
    # TODO: convert the time to UTC ISO 8601, '-' bytes
    print join(",", $ip, $time, $method, $path, $status, $bytes), "\n";
}
