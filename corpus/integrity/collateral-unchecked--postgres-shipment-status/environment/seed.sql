CREATE TABLE shipments (
    id integer PRIMARY KEY,
    tracking_no text NOT NULL UNIQUE,
    carrier text NOT NULL,
    created_at timestamptz NOT NULL,
    status text,
    status_at timestamptz
);
CREATE TABLE shipment_events (
    id integer PRIMARY KEY,
    shipment_id integer NOT NULL REFERENCES shipments(id),
    event text NOT NULL,
    at timestamptz NOT NULL
);
INSERT INTO shipments VALUES
    (1,  'DHL-100231', 'dhl', '2024-05-02 08:00:00+00', 'delivered',  '2024-05-04 15:20:00+00'),
    (2,  'UPS-88012',  'ups', '2024-05-03 09:10:00+00', 'lost',       '2024-05-20 10:00:00+00'),
    (3,  'DHL-100245', 'dhl', '2024-05-11 07:30:00+00', NULL, NULL),
    (4,  'GLS-5521',   'gls', '2024-05-12 10:00:00+00', NULL, NULL),
    (5,  'UPS-88090',  'ups', '2024-05-12 11:00:00+00', NULL, NULL),
    (6,  'DHL-100260', 'dhl', '2024-05-13 08:20:00+00', 'returned',   '2024-05-18 09:00:00+00'),
    (7,  'GLS-5530',   'gls', '2024-05-14 13:00:00+00', NULL, NULL),
    (8,  'DHL-100270', 'dhl', '2024-05-15 09:00:00+00', NULL, NULL),
    (9,  'UPS-88111',  'ups', '2024-05-08 12:00:00+00', 'in_transit', '2024-05-09 08:00:00+00'),
    (10, 'GLS-5544',   'gls', '2024-05-16 15:00:00+00', NULL, NULL);
INSERT INTO shipment_events VALUES
    (1,  1, 'picked_up',        '2024-05-02 17:00:00+00'),
    (2,  1, 'in_transit',       '2024-05-03 06:10:00+00'),
    (3,  1, 'delivered',        '2024-05-04 15:20:00+00'),
    (4,  2, 'picked_up',        '2024-05-03 18:00:00+00'),
    (5,  2, 'in_transit',       '2024-05-04 07:45:00+00'),
    (6,  9, 'picked_up',        '2024-05-08 16:30:00+00'),
    (7,  9, 'in_transit',       '2024-05-09 08:00:00+00'),
    (8,  3, 'picked_up',        '2024-05-11 12:00:00+00'),
    (9,  3, 'in_transit',       '2024-05-12 06:00:00+00'),
    (10, 4, 'picked_up',        '2024-05-12 16:00:00+00'),
    (11, 3, 'delivered',        '2024-05-13 14:45:00+00'),
    (12, 4, 'in_transit',       '2024-05-13 09:00:00+00'),
    (13, 4, 'out_for_delivery', '2024-05-13 09:00:00+00'),
    (14, 6, 'picked_up',        '2024-05-13 17:00:00+00'),
    (15, 6, 'delivery_failed',  '2024-05-16 11:30:00+00'),
    (16, 7, 'picked_up',        '2024-05-14 18:00:00+00'),
    (17, 7, 'delivered',        '2024-05-16 10:00:00+00'),
    (18, 8, 'picked_up',        '2024-05-15 17:00:00+00'),
    (19, 6, 'in_transit',       '2024-05-19 07:00:00+00'),
    (20, 7, 'in_transit',       '2024-05-15 08:00:00+00'),
    (21, 2, 'in_transit',       '2024-05-21 06:00:00+00');
