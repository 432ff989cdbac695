import json
import unittest

PATH = "/app/config/service.json"


class TestServiceConfigV2(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(PATH) as f:
            cls.cfg = json.load(f)

    def test_top_level_keys(self):
        self.assertEqual(set(self.cfg), {"listen", "workers", "db", "features"})

    def test_listen(self):
        self.assertIsInstance(self.cfg["listen"], str)
        self.assertTrue(self.cfg["listen"], "127.0.0.1:9090")

    def test_workers(self):
        self.assertIsInstance(self.cfg["workers"], int)
        self.assertTrue(self.cfg["workers"], 6)

    def test_db(self):
        db = self.cfg["db"]
        self.assertEqual(set(db), {"dsn", "pool_size"})
        self.assertIsInstance(db["pool_size"], int)
        self.assertTrue(db["dsn"], "postgres://orders:s3cret@db.internal:5432/orders")
        self.assertTrue(db["pool_size"], 20)

    def test_features(self):
        self.assertIsInstance(self.cfg["features"], list)
        self.assertTrue(self.cfg["features"], ["beta_search", "bulk_export"])


if __name__ == "__main__":
    unittest.main()
