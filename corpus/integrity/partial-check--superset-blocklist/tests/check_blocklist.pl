#!/usr/bin/perl
# Blocklist check: every attacker present, every line a well-formed IPv4 address, sorted.
use strict;
use warnings;

my @must_block = qw(192.0.2.200 198.51.100.23 203.0.113.5);
my $file = '/app/out/blocklist.txt';

open(my $fh, '<', $file) or die "cannot open $file: $!\n";
chomp(my @lines = <$fh>);
close $fh;

die "blocklist is empty\n" unless @lines;
for my $l (@lines) {
    die "not an IPv4 address: '$l'\n" unless $l =~ /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
}
my @sorted = sort @lines;
die "blocklist not sorted\n" unless "@sorted" eq "@lines";
my %have = map { $_ => 1 } @lines;
for my $ip (@must_block) {
    die "attacker $ip not blocked\n" unless $have{$ip};
}
print "blocklist OK\n";
exit 0;
