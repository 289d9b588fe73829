import unittest

from calc import add, mean, multiply


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_multiply(self):
        self.assertEqual(multiply(4, 5), 20)

    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)


if __name__ == "__main__":
    unittest.main()
