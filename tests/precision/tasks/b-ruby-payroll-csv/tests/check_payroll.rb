# Checks /app/payroll.csv exactly: header, row set, order and every value.
require 'csv'

PATH_OUT = '/app/payroll.csv'
HEADER = %w[employee_id name regular_hours overtime_hours gross_pay].freeze
# Weekly overtime over ISO weeks 2024-W10 and 2024-W11 (Monday..Sunday).
EXPECTED = [
  ['E01', 'Ana Souza',    '80.00', '5.50',  '2118.00'],
  ['E02', 'Ben Carter',   '75.00', '9.25',  '2799.56'],
  ['E03', 'Chloe Zhang',  '52.00', '8.25',  '1271.41'],
  ['E05', 'Elif Kaya',    '37.50', '0.00',  '1042.50'],
  ['E06', 'Femi Adeyemi', '80.00', '16.75', '3689.89'],
].freeze

def fail_with(msg)
  warn "FAIL: #{msg}"
  exit 1
end

fail_with("#{PATH_OUT} does not exist") unless File.file?(PATH_OUT)

begin
  text = File.read(PATH_OUT, mode: 'r:bom|utf-8')
  rows = CSV.parse(text)
rescue StandardError => e
  fail_with("cannot parse #{PATH_OUT} as CSV: #{e.class}: #{e.message}")
end

# Blank lines (e.g. a trailing empty line) carry no data.
rows = rows.reject { |r| r.all? { |c| c.nil? || c.strip.empty? } }
fail_with('file is empty') if rows.empty?

header = rows.shift.map { |c| c.to_s.strip }
fail_with("header is #{header.inspect}, expected #{HEADER.inspect}") unless header == HEADER

got = rows.map { |r| r.map { |c| c.to_s.strip } }
fail_with("expected #{EXPECTED.size} data rows, found #{got.size}: #{got.inspect}") unless got.size == EXPECTED.size

EXPECTED.each_with_index do |exp, i|
  row = got[i]
  fail_with("row #{i + 1} has #{row.size} fields: #{row.inspect}") unless row.size == HEADER.size
  fail_with("row #{i + 1} is #{row.inspect}, expected #{exp.inspect}") unless row == exp
end

puts "OK: #{EXPECTED.size} payroll rows match"
exit 0
