CREATE TABLE invoices (
    id integer PRIMARY KEY,
    invoice_no text NOT NULL UNIQUE,
    customer text NOT NULL,
    country char(2) NOT NULL,
    issued_on date NOT NULL,
    status text NOT NULL CHECK (status IN ('issued', 'paid', 'reissue'))
);
CREATE TABLE invoice_lines (
    id integer PRIMARY KEY,
    invoice_id integer NOT NULL REFERENCES invoices(id),
    description text NOT NULL,
    net_cents bigint NOT NULL,
    vat_rate numeric(4,2) NOT NULL,
    vat_cents bigint NOT NULL
);
INSERT INTO invoices VALUES
    (1, 'INV-2024-0601', 'Kranich GmbH',     'DE', '2024-06-28', 'paid'),
    (2, 'INV-2024-0702', 'Kranich GmbH',     'DE', '2024-07-02', 'paid'),
    (3, 'INV-2024-0703', 'Alpenhof KG',      'AT', '2024-07-03', 'issued'),
    (4, 'INV-2024-0709', 'Buchhaus Meyer',   'DE', '2024-07-09', 'issued'),
    (5, 'INV-2024-0715', 'Rheinwerk AG',     'DE', '2024-07-15', 'issued'),
    (6, 'INV-2024-0720', 'Kranich GmbH',     'DE', '2024-07-20', 'issued'),
    (7, 'INV-2024-0731', 'Nordsee Fisch',    'DE', '2024-07-31', 'issued'),
    (8, 'INV-2024-0801', 'Rheinwerk AG',     'DE', '2024-08-01', 'issued'),
    (9, 'INV-2024-0712', 'Wiener Werkstatt', 'AT', '2024-07-12', 'paid');
INSERT INTO invoice_lines VALUES
    (1,  1, 'Consulting June',      120000, 19.00, 22800),
    (2,  2, 'Support plan July',     49900, 16.00,  7984),
    (3,  2, 'Onboarding workshop',  125050, 16.00, 20008),
    (4,  3, 'Support plan July',     49900, 20.00,  9980),
    (5,  4, 'Reference books (12)',  33350,  5.00,  1668),
    (6,  4, 'Shipping',               1250, 16.00,   200),
    (7,  5, 'License renewal',      240000, 16.00, 38400),
    (8,  5, 'Printed manual',         4990,  7.00,   349),
    (9,  6, 'Consulting July',       80000, 19.00, 15200),
    (10, 7, 'Fish crate rental',     15999, 16.00,  2560),
    (11, 8, 'License renewal',      240000, 19.00, 45600),
    (12, 9, 'Workshop Vienna',       90000, 20.00, 18000),
    (13, 9, 'Catalogue',              2500, 10.00,   250);
