CREATE TABLE orders (
    id integer PRIMARY KEY,
    external_ref text NOT NULL,
    customer text NOT NULL,
    amount_text text NOT NULL
);
INSERT INTO orders VALUES
    (1, 'WEB-1001', 'Nordlys AS',  '1,234.50 EUR'),
    (2, 'WEB-1002', 'Acme, Inc.',  '19.99 EUR'),
    (3, 'WEB-1003', 'Birch & Co',  '250.00 EUR'),
    (4, 'WEB-1002', 'Acme, Inc.',  '19.99 EUR'),
    (5, 'POS-0007', 'Mira Lind',   '0.50 EUR'),
    (6, 'WEB-1004', 'Nordlys AS',  '12,000.05 EUR'),
    (7, 'POS-0008', 'Bo Ek',       '7.00 EUR'),
    (8, 'WEB-1003', 'Birch & Co',  '250.00 EUR'),
    (9, 'WEB-1005', 'Acme, Inc.',  '3.10 EUR');
