"""Generate the sixstep story corpus from a small grammar (deterministic by seed).

Usage:  python3 corpus.py --seed 1 --docs 10000 --out out/corpus.txt \
            [--sample ../../data/corpus-sample.txt --stats ../../data/corpus-stats.json]

Output: one document per record, records separated by a line holding only
"<|doc|>" (never part of a document).  Training wraps every document as
<|bos|> text <|eos|>.  A summary with the exact counts of the cat sentence is
written next to it (<out>.stats.json).

The cat sentence.  "The cat sat on the" is continued *only* through a deck of
100 cards, reshuffled whenever it runs out:
    mat 42, rug 18, floor 12, seat 8, and 20 others (bed, chair, box, step,
    sofa, table, wall, grass, roof, bench: 2 each).
There are two decks, one for documents that *start* with the cat sentence
(the context "<|bos|>The cat sat on the") and one for the sentence inside a
story (context "... . The cat sat on the").  No other template says
"sat on", so the words after "The cat sat on the" in the corpus follow these
proportions (exactly, at every multiple of 100 draws).
"""
import argparse
import hashlib
import json
import random

CAT_DECK = (["mat"] * 42 + ["rug"] * 18 + ["floor"] * 12 + ["seat"] * 8
            + [w for w in ["bed", "chair", "box", "step", "sofa", "table",
                           "wall", "grass", "roof", "bench"] for _ in range(2)])
assert len(CAT_DECK) == 100

GIRLS = ["Lily", "Mia", "Sara", "Anna", "Emma", "Zoe", "Lucy", "Amy", "Rosa",
         "Nina", "Ella", "Maya", "Kate", "Ivy", "Ruby", "Hana", "Leah", "Tina",
    "Olivia", "Grace", "Chloe", "Sophie", "Alice", "Clara", "Julia", "Nora", "Stella", "Hazel", "Violet", "Iris", "Luna", "Aria", "Eva", "Fiona", "Gemma", "Helen", "Jade", "Kira", "Laura", "Molly", "Nadia", "Paula", "Quinn", "Rita", "Sofia", "Tara", "Uma", "Vera", "Wendy", "Yara", "Zara", "Bella", "Daisy", "Esme", "Freya", "Holly", "Isla"]
BOYS = ["Tom", "Ben", "Max", "Sam", "Leo", "Jack", "Tim", "Finn", "Noah",
        "Omar", "Liam", "Kai", "Hugo", "Eli", "Jake", "Ravi", "Dan", "Owen",
    "Oliver", "Henry", "Lucas", "Ethan", "Mason", "Logan", "James", "Adam", "Felix", "Oscar", "Jonah", "Caleb", "Milo", "Arlo", "Theo", "Ezra", "Jasper", "Rory", "Simon", "Victor", "Walter", "Xavier", "Yusuf", "Zack", "Aaron", "Brian", "Colin", "Derek", "Evan", "Frank", "George", "Harry", "Ivan", "Joel", "Kevin", "Louis", "Marco", "Nick", "Peter"]
ANIMALS = ["dog", "bird", "rabbit", "fox", "bear", "duck", "frog", "mouse",
           "owl", "horse", "pig", "lion", "turtle", "puppy", "kitten", "cow",
           "sheep", "goat", "squirrel", "deer", "fish", "bee",
    "elephant", "giraffe", "monkey", "zebra", "tiger", "wolf", "penguin", "dolphin", "whale", "camel", "kangaroo", "koala", "panda", "snail", "spider", "butterfly", "ladybug", "hedgehog", "beaver", "otter", "seal", "parrot", "chicken", "goose", "swan", "crab", "octopus", "dragon", "unicorn", "donkey", "hamster", "lizard", "badger", "raccoon", "moose"]
ANIMAL_NAMES = ["Spot", "Fluffy", "Pip", "Coco", "Bubbles", "Sunny", "Daisy",
                "Rex", "Buddy", "Milo", "Bella", "Nibbles", "Patch", "Ziggy",
    "Biscuit", "Pepper", "Ginger", "Cookie", "Peanut", "Waffles", "Noodle", "Pickles", "Shadow", "Tiger", "Oreo", "Maple", "Rusty", "Snowy", "Twinkle", "Whiskers", "Bingo", "Dotty", "Jelly", "Marble", "Pudding", "Toffee", "Winnie", "Zippy"]
PEOPLE = ["mom", "dad", "grandma", "grandpa", "teacher", "friend", "sister",
          "brother", "neighbor", "baker", "farmer", "doctor",
    "mailman", "pilot", "painter", "singer", "dancer", "nurse", "cook", "king", "queen", "prince", "princess", "wizard", "fairy", "pirate", "sailor"]
ADJ = ["little", "big", "happy", "small", "kind", "brave", "funny", "shy",
       "old", "young", "clever", "gentle", "curious", "sleepy", "friendly",
       "tiny", "proud", "quiet", "busy", "silly",
    "bright", "cheerful", "grumpy", "lazy", "tall", "short", "strong", "wise", "lucky", "clumsy", "noisy", "playful", "polite", "fluffy", "fuzzy", "wild", "careful", "honest", "cozy", "merry", "jolly", "eager", "hungry", "fancy", "gentle", "magical", "mighty"]
COLORS = ["red", "blue", "green", "yellow", "pink", "purple", "orange",
          "white", "black", "brown", "golden", "shiny",
    "silver", "gray", "violet", "crimson", "turquoise", "beige", "spotted", "striped"]
PLACES = ["park", "garden", "forest", "beach", "river", "farm", "school",
          "house", "town", "hill", "lake", "library", "shop", "zoo", "field",
          "market", "castle", "village", "playground", "kitchen", "pond",
          "meadow", "cave", "island",
    "mountain", "desert", "jungle", "city", "harbor", "bakery", "museum", "station", "airport", "garage", "attic", "basement", "bedroom", "classroom", "orchard", "valley", "swamp", "canyon", "volcano", "lighthouse", "circus", "theater", "stadium", "hospital", "bridge", "tower", "palace", "temple", "greenhouse", "barn", "tent"]
THINGS = ["ball", "kite", "box", "hat", "book", "flower", "tree", "cake",
          "apple", "boat", "stone", "shell", "bell", "drum", "star", "car",
          "cup", "toy", "train", "balloon", "cookie", "leaf", "key", "map",
          "bag", "sock", "feather", "puzzle", "blanket", "basket",
    "umbrella", "pencil", "crayon", "candle", "clock", "lamp", "mirror", "pillow", "rocket", "robot", "spoon", "fork", "plate", "bottle", "jar", "ribbon", "button", "coin", "ring", "necklace", "whistle", "trumpet", "guitar", "piano", "violin", "wagon", "bicycle", "sandwich", "lemon", "banana", "orange", "carrot", "pumpkin", "acorn", "pebble", "crown", "wand", "sword", "shield", "telescope", "compass", "letter", "present"]
FOODS = ["apples", "cookies", "bread", "soup", "cake", "carrots", "berries",
         "cheese", "honey", "pie", "rice", "milk", "pancakes", "grapes",
    "noodles", "muffins", "sandwiches", "pizza", "oranges", "bananas", "cereal", "porridge", "eggs", "toast", "yogurt", "peaches", "plums", "cherries", "lemonade", "tomatoes", "potatoes", "beans"]
FEELINGS = ["happy", "sad", "scared", "excited", "tired", "angry", "proud",
            "surprised", "lonely", "calm", "hungry", "worried", "glad",
            "curious", "brave", "sorry",
    "cheerful", "nervous", "grumpy", "silly", "shy", "thankful", "hopeful", "jealous", "confused", "bored", "joyful", "peaceful", "sleepy", "cozy", "grateful", "upset"]
WEATHER = ["sunny", "rainy", "windy", "cold", "warm", "cloudy", "snowy",
           "bright", "quiet", "lovely",
    "foggy", "stormy", "chilly", "breezy", "frosty", "misty", "hot", "gloomy"]
MOVES = ["ran", "walked", "jumped", "hopped", "skipped", "raced", "went",
         "flew", "swam", "climbed", "rode", "wandered",
    "tiptoed", "marched", "dashed", "strolled", "crawled", "galloped", "drove", "sailed", "hurried", "zoomed"]
PLAY = ["played", "laughed", "sang", "danced", "talked", "read", "painted",
        "built a tower", "looked for bugs", "drew pictures", "told jokes",
        "played tag", "had a picnic", "counted the stars",
    "played catch", "flew a kite", "baked a cake", "planted seeds", "picked flowers", "made a snowman", "splashed in puddles", "built a sandcastle", "played hide and seek", "rode bikes", "watched the clouds", "fed the ducks", "sang songs", "made a card", "played music", "solved a puzzle"]
FAMILY = ["mom", "dad", "grandma", "grandpa", "sister", "brother", "aunt",
          "uncle", "friends"]
NUMBERS = ["two", "three", "four", "five", "six", "seven", "eight", "ten"]
SPOTS = ["tree", "bridge", "table", "window", "door", "fence", "rock",
         "bush", "wall", "bench", "hill",
    "gate", "chair", "stairs", "curtain", "cupboard", "blanket", "pillow", "barrel", "ladder", "fountain", "statue", "mailbox"]


class Char:
    """A character: name, how to call it, pronouns."""

    def __init__(self, name, kind, he, him, his):
        self.name, self.kind = name, kind
        self.he, self.him, self.his = he, him, his


def make_char(rng, avoid=()):
    r = rng.random()
    while True:
        if r < 0.4:
            c = Char(rng.choice(GIRLS), "girl", "she", "her", "her")
        elif r < 0.8:
            c = Char(rng.choice(BOYS), "boy", "he", "him", "his")
        else:
            kind = rng.choice(ANIMALS)
            c = Char(rng.choice(ANIMAL_NAMES), kind, "it", "it", "its")
        if c.name not in avoid:
            return c
        r = rng.random()


def cap(s):
    return s[0].upper() + s[1:]


def a_an(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.decks = {"start": [], "mid": []}
        self.counts = {"start": {}, "mid": {}}

    def cat_word(self, where):
        deck = self.decks[where]
        if not deck:
            deck.extend(CAT_DECK)
            self.rng.shuffle(deck)
        w = deck.pop()
        self.counts[where][w] = self.counts[where].get(w, 0) + 1
        return w

    def cat_sentence(self, where):
        return f"The cat sat on the {self.cat_word(where)}."

    # ---- sentences about a hero (and maybe a friend) ----
    def sentence(self, h, f):
        rng = self.rng
        k = rng.randrange(24)
        n, fn = h.name, f.name
        if k == 0:
            return f"{n} {rng.choice(MOVES)} to the {rng.choice(PLACES)}."
        if k == 1:
            return f"{cap(h.he)} saw {a_an(rng.choice(COLORS))} {rng.choice(THINGS)} near the {rng.choice(SPOTS)}."
        if k == 2:
            return f"{n} felt {rng.choice(FEELINGS)}."
        if k == 3:
            return f"{n} and {fn} {rng.choice(PLAY)} at the {rng.choice(PLACES)}."
        if k == 4:
            return f"\"Let's go to the {rng.choice(PLACES)}!\" said {n}."
        if k == 5:
            return f"{fn} said, \"I am so {rng.choice(FEELINGS)} today.\""
        if k == 6:
            return f"\"Can you help me find my {rng.choice(THINGS)}?\" asked {n}."
        if k == 7:
            return f"\"Yes, I can!\" said {fn}, and they looked everywhere."
        if k == 8:
            return f"It was a {rng.choice(WEATHER)} day, and the sky was {rng.choice(['blue', 'grey', 'clear', 'pink', 'bright'])}."
        if k == 9:
            return f"{n} had {rng.choice(NUMBERS)} {rng.choice(COLORS)} {rng.choice(THINGS)}s."
        if k == 10:
            return f"{cap(h.he)} wanted to eat some {rng.choice(FOODS)}, so {h.he} asked {h.his} {rng.choice(PEOPLE)}."
        if k == 11:
            return f"The {rng.choice(ANIMALS)} {rng.choice(['sat by', 'sat under', 'slept near', 'hid behind', 'waited by'])} the {rng.choice(SPOTS)}."
        if k == 12:
            return f"{n} was {rng.choice(FEELINGS)} because the {rng.choice(THINGS)} was {rng.choice(['lost', 'broken', 'gone', 'too high', 'stuck'])}."
        if k == 13:
            return f"\"Thank you, {fn}!\" said {n}. \"You are a good friend.\""
        if k == 14:
            return f"{fn} gave {n} {a_an(rng.choice(COLORS))} {rng.choice(THINGS)}."
        if k == 15:
            return f"They {rng.choice(MOVES)} to the {rng.choice(PLACES)} and {rng.choice(PLAY)}."
        if k == 16:
            return f"{cap(h.he)} found a {rng.choice(THINGS)} under the {rng.choice(SPOTS)}."
        if k == 17:
            return f"\"Look at the {rng.choice(ADJ)} {rng.choice(ANIMALS)}!\" said {fn}."
        if k == 18:
            return f"{n} asked, \"Do you want to play with me?\""
        if k == 19:
            return f"The {rng.choice(ANIMALS)} was {rng.choice(ADJ)} and {rng.choice(FEELINGS)}."
        if k == 20:
            return f"At {rng.randrange(1, 13)} o'clock, {n} ate {rng.choice(FOODS)} with {h.his} {rng.choice(FAMILY)}."
        if k == 21:
            return f"{n} counted {rng.randrange(2, 21)} {rng.choice(['birds', 'stars', 'stones', 'apples', 'leaves', 'boats'])}."
        if k == 22:
            return f"{cap(h.his)} {rng.choice(PEOPLE)} said, \"Be careful, {n}!\""
        return f"{n} did not want to {rng.choice(['sleep', 'go home', 'share', 'wait', 'stop'])}, but {h.he} {rng.choice(['did', 'tried', 'said yes'])}."

    def opener(self, h):
        rng = self.rng
        k = rng.randrange(5)
        what = h.kind if h.kind in ("girl", "boy") else h.kind
        if k == 0:
            return f"Once upon a time, there was {a_an(rng.choice(ADJ))} {what} named {h.name}."
        if k == 1:
            return f"Once upon a time, in a {rng.choice(ADJ)} {rng.choice(['town', 'village', 'forest', 'house', 'farm'])}, there lived {a_an(what)} named {h.name}."
        if k == 2:
            return f"Once upon a time, {h.name} the {what} lived near a {rng.choice(PLACES)}."
        if k == 3:
            return f"One day, {h.name} went to the {rng.choice(PLACES)}."
        return f"One {rng.choice(WEATHER)} morning, {h.name} woke up and felt {rng.choice(FEELINGS)}."

    def ending(self, h, f):
        rng = self.rng
        k = rng.randrange(6)
        if k == 0:
            return f"{h.name} and {f.name} were very happy."
        if k == 1:
            return "The end."
        if k == 2:
            return f"From that day on, {h.name} and {f.name} were best friends."
        if k == 3:
            return f"That night, {h.name} went to sleep with a big smile."
        if k == 4:
            return f"{cap(h.he)} learned to be {rng.choice(['kind', 'brave', 'patient', 'careful', 'honest'])}."
        return "Everyone had a good day."

    def story(self, cat_start):
        rng = self.rng
        h = make_char(rng)
        f = make_char(rng, avoid=(h.name,))
        parts = []
        if cat_start:
            parts.append(self.cat_sentence("start"))
            parts.append(f"{h.name} {rng.choice(['looked at', 'smiled at', 'played with', 'waved to', 'sang to'])} the cat.")
        else:
            parts.append(self.opener(h))
        for _ in range(rng.randrange(4, 10)):
            if rng.random() < 0.08:
                parts.append(self.cat_sentence("mid"))
            else:
                parts.append(self.sentence(h, f))
        parts.append(self.ending(h, f))
        text = ""
        for i, p in enumerate(parts):
            if i == 0:
                text = p
            elif rng.random() < 0.08:
                text += "\n\n" + p
            else:
                text += " " + p
        return text

    def sentences(self):
        """A short list of plain sentences, one per line."""
        rng = self.rng
        lines = []
        for _ in range(rng.randrange(3, 7)):
            h = make_char(rng)
            f = make_char(rng, avoid=(h.name,))
            lines.append(self.sentence(h, f))
        return "\n".join(lines)


def generate(seed, n_docs):
    g = Gen(seed)
    # document kinds with exact counts, in a seeded order
    n_cat = n_docs * 3 // 10
    n_sent = n_docs * 15 // 100
    kinds = ["cat"] * n_cat + ["sent"] * n_sent + ["story"] * (n_docs - n_cat - n_sent)
    g.rng.shuffle(kinds)
    docs = []
    for k in kinds:
        if k == "cat":
            docs.append(g.story(True))
        elif k == "sent":
            docs.append(g.sentences())
        else:
            docs.append(g.story(False))
    return docs, g.counts


SEP = "\n<|doc|>\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--docs", type=int, default=10000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sample", help="also write the first --sample-docs documents here")
    ap.add_argument("--sample-docs", type=int, default=40)
    ap.add_argument("--stats", help="write the summary here (default <out>.stats.json)")
    a = ap.parse_args()
    docs, counts = generate(a.seed, a.docs)
    data = SEP.join(docs)
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write(data)
    stats = {"seed": a.seed, "docs": len(docs), "bytes": len(data.encode()),
             "sha256": hashlib.sha256(data.encode()).hexdigest(),
             "cat_counts": {w: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
                            for w, c in counts.items()}}
    for where, c in counts.items():
        tot = sum(c.values())
        stats[f"cat_{where}_total"] = tot
    for where, c in counts.items():
        tot = sum(c.values())
        stats[f"cat_{where}_percent"] = {w: round(100.0 * n / tot, 2) for w, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))}
    with open(a.stats or a.out + ".stats.json", "w") as fh:
        json.dump(stats, fh, indent=1)
        fh.write("\n")
    if a.sample:
        with open(a.sample, "w", encoding="utf-8") as fh:
            fh.write(SEP.join(docs[:a.sample_docs]) + "\n")
    print(json.dumps(stats, indent=1))


if __name__ == "__main__":
    main()
