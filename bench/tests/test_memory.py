"""The memory benchmark's mixed tasks (bench/memory.py): the five skills in turn, each body a
`message/send` with one place for its messageId."""

import json
import tempfile
import unittest

import memory


class MixedBodies(unittest.TestCase):
    def test_the_five_skills_in_turn_each_body_with_one_message_id(self):
        with tempfile.TemporaryDirectory() as folder:
            path, lines = memory.mixed_bodies(folder, per_skill=3)
            with open(path) as written:
                self.assertEqual(written.read().splitlines(), lines)
        self.assertEqual(len(lines), 15)
        skills = [json.loads(line.replace("%s", "m-1", 1))["params"]["message"]["metadata"]
                  ["skillId"] for line in lines]
        self.assertEqual(skills[:5], ["catholic_qa", "document_search", "document_fetch",
                                      "liturgical_readings", "saints_of_the_day"])
        self.assertEqual(skills[5:10], skills[:5])
        for line in lines:
            self.assertEqual(line.count("%s"), 1, line)
            message = json.loads(line.replace("%s", "m-1", 1))["params"]["message"]
            self.assertEqual(message["messageId"], "m-1")
            self.assertTrue(message["parts"][0]["text"])

    def test_the_same_seed_draws_the_same_bodies(self):
        with tempfile.TemporaryDirectory() as folder:
            _, first = memory.mixed_bodies(folder, per_skill=4)
            _, again = memory.mixed_bodies(folder, per_skill=4)
        self.assertEqual(first, again)


if __name__ == "__main__":
    unittest.main()
