CREATE TABLE products (
    sku TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    price_cents INTEGER NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
);
CREATE TABLE price_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sku TEXT NOT NULL REFERENCES products(sku),
    old_cents INTEGER NOT NULL,
    new_cents INTEGER NOT NULL,
    changed_at TEXT NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL REFERENCES products(sku),
    qty INTEGER NOT NULL,
    unit_cents INTEGER NOT NULL,
    ordered_at TEXT NOT NULL
);
INSERT INTO products VALUES ('P-1001', 'Espresso beans 1kg', 1799, 1, '2024-06-24');
INSERT INTO products VALUES ('P-1002', 'Oat milk 1l', 435, 1, '2024-04-15');
INSERT INTO products VALUES ('P-1003', 'Paper cups (50)', 35, 1, '2024-06-15');
INSERT INTO products VALUES ('P-1004', 'Stirrers (100)', 700, 1, '2024-06-19');
INSERT INTO products VALUES ('P-1005', 'Cold brew filter', 1150, 1, '2024-03-27');
INSERT INTO products VALUES ('P-1006', 'Ceramic mug', 999, 0, '2024-03-22');
INSERT INTO products VALUES ('P-1007', 'Travel mug', 3800, 1, '2024-04-10');
INSERT INTO products VALUES ('P-1008', 'Milk jug 600ml', 4418, 1, '2024-03-11');
INSERT INTO products VALUES ('P-1009', 'Tamper 58mm', 382, 1, '2024-04-17');
INSERT INTO products VALUES ('P-1010', 'Knock box', 125, 1, '2024-03-24');
INSERT INTO products VALUES ('P-1011', 'Descaler', 2762, 1, '2024-06-28');
INSERT INTO products VALUES ('P-1012', 'Grinder brush', 1690, 1, '2024-04-19');
INSERT INTO products VALUES ('P-1013', 'Cocoa powder 500g', 4184, 1, '2024-03-12');
INSERT INTO products VALUES ('P-1014', 'Vanilla syrup', 3836, 1, '2024-05-23');
INSERT INTO products VALUES ('P-1015', 'Caramel syrup', 4605, 1, '2024-03-18');
INSERT INTO products VALUES ('P-1016', 'Chai concentrate', 2672, 1, '2024-04-26');
INSERT INTO products VALUES ('P-1017', 'Green tea (20)', 2457, 0, '2024-03-12');
INSERT INTO products VALUES ('P-1018', 'Earl grey (20)', 4703, 1, '2024-03-22');
INSERT INTO products VALUES ('P-1019', 'Sugar sticks (200)', 973, 1, '2024-05-22');
INSERT INTO products VALUES ('P-1020', 'Napkins (500)', 637, 1, '2024-03-10');
INSERT INTO products VALUES ('P-1021', 'Lids (50)', 1839, 1, '2024-04-11');
INSERT INTO products VALUES ('P-1022', 'Sleeves (100)', 3940, 1, '2024-06-22');
INSERT INTO products VALUES ('P-1023', 'Scale 0.1g', 3528, 1, '2024-03-28');
INSERT INTO products VALUES ('P-1024', 'Thermometer', 5246, 1, '2024-04-18');
INSERT INTO products VALUES ('P-1025', 'Cleaning tablets', 2849, 1, '2024-03-19');
INSERT INTO price_history (sku, old_cents, new_cents, changed_at) VALUES ('P-1001', 1650, 1799, '2024-03-02');
INSERT INTO price_history (sku, old_cents, new_cents, changed_at) VALUES ('P-1003', 30, 35, '2024-03-02');
INSERT INTO price_history (sku, old_cents, new_cents, changed_at) VALUES ('P-1008', 4200, 4418, '2024-03-11');
INSERT INTO price_history (sku, old_cents, new_cents, changed_at) VALUES ('P-1001', 1799, 1850, '2024-05-01');
INSERT INTO price_history (sku, old_cents, new_cents, changed_at) VALUES ('P-1001', 1850, 1799, '2024-05-20');
INSERT INTO orders VALUES (5001, 'P-1011', 1, 2762, '2024-06-14');
INSERT INTO orders VALUES (5002, 'P-1025', 2, 2849, '2024-06-05');
INSERT INTO orders VALUES (5003, 'P-1008', 2, 4418, '2024-06-01');
INSERT INTO orders VALUES (5004, 'P-1002', 8, 435, '2024-06-26');
INSERT INTO orders VALUES (5005, 'P-1016', 3, 2672, '2024-06-22');
INSERT INTO orders VALUES (5006, 'P-1018', 4, 4703, '2024-06-15');
INSERT INTO orders VALUES (5007, 'P-1017', 4, 2457, '2024-06-24');
INSERT INTO orders VALUES (5008, 'P-1025', 3, 2849, '2024-06-14');
INSERT INTO orders VALUES (5009, 'P-1021', 7, 1839, '2024-06-04');
INSERT INTO orders VALUES (5010, 'P-1013', 7, 4184, '2024-06-07');
INSERT INTO orders VALUES (5011, 'P-1001', 5, 1799, '2024-06-28');
INSERT INTO orders VALUES (5012, 'P-1019', 5, 973, '2024-06-01');
INSERT INTO orders VALUES (5013, 'P-1007', 3, 3800, '2024-06-13');
INSERT INTO orders VALUES (5014, 'P-1020', 11, 637, '2024-06-19');
INSERT INTO orders VALUES (5015, 'P-1004', 1, 700, '2024-06-05');
INSERT INTO orders VALUES (5016, 'P-1007', 8, 3800, '2024-06-09');
INSERT INTO orders VALUES (5017, 'P-1001', 10, 1799, '2024-06-11');
INSERT INTO orders VALUES (5018, 'P-1010', 7, 125, '2024-06-03');
INSERT INTO orders VALUES (5019, 'P-1003', 2, 35, '2024-06-07');
INSERT INTO orders VALUES (5020, 'P-1019', 11, 973, '2024-06-08');
INSERT INTO orders VALUES (5021, 'P-1001', 10, 1799, '2024-06-12');
INSERT INTO orders VALUES (5022, 'P-1012', 10, 1690, '2024-06-15');
INSERT INTO orders VALUES (5023, 'P-1005', 10, 1150, '2024-06-16');
INSERT INTO orders VALUES (5024, 'P-1019', 3, 973, '2024-06-28');
INSERT INTO orders VALUES (5025, 'P-1013', 3, 4184, '2024-06-21');
INSERT INTO orders VALUES (5026, 'P-1005', 5, 1150, '2024-06-08');
INSERT INTO orders VALUES (5027, 'P-1020', 4, 637, '2024-06-24');
INSERT INTO orders VALUES (5028, 'P-1007', 3, 3800, '2024-06-24');
INSERT INTO orders VALUES (5029, 'P-1021', 9, 1839, '2024-06-07');
INSERT INTO orders VALUES (5030, 'P-1022', 7, 3940, '2024-06-16');
INSERT INTO orders VALUES (5031, 'P-1020', 2, 637, '2024-06-14');
INSERT INTO orders VALUES (5032, 'P-1002', 2, 435, '2024-06-04');
INSERT INTO orders VALUES (5033, 'P-1002', 9, 435, '2024-06-09');
INSERT INTO orders VALUES (5034, 'P-1008', 7, 4418, '2024-06-09');
INSERT INTO orders VALUES (5035, 'P-1014', 10, 3836, '2024-06-16');
INSERT INTO orders VALUES (5036, 'P-1010', 9, 125, '2024-06-06');
INSERT INTO orders VALUES (5037, 'P-1024', 2, 5246, '2024-06-05');
INSERT INTO orders VALUES (5038, 'P-1008', 8, 4418, '2024-06-18');
INSERT INTO orders VALUES (5039, 'P-1021', 10, 1839, '2024-06-20');
INSERT INTO orders VALUES (5040, 'P-1003', 5, 35, '2024-06-07');
