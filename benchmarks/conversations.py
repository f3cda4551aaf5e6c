"""A development benchmark for recall that looks like real use: seeded memories of long,
multi-session conversations between two people, each turned into a few hundred observation
records, and over a thousand questions with the records that answer them, or none.

Each memory is two friends talking over twenty-odd sessions a few weeks apart. A session is
small talk, news of what each did (a race, a new puppy, a gift from a grandparent, a job change),
photos described in words, and replies that name the other person ("Thanks, Priya!"). Records are
what a memory importer makes of that: one per observation, ``said_by`` the speaker, ``about``
everyone it names (so a reply to Priya names her), dated by its session; a job change supersedes
the old job.

Questions are asked the way people ask: paraphrased, with pronouns, a typo now and then, some
sharing few words with their record. Kinds:

- ``single-hop``, ``temporal`` (when), ``multi-hop`` (two records of one person);
- no memory: ``wrong-person`` (what the other one did), ``swapped-object`` (her grandfather's gift
  when it was her grandmother's), ``swapped-activity`` (painting when it was pottery),
  ``unmentioned`` (never said, but sharing words with what was), ``superseded`` (a state that was
  replaced, asked as if current).

``python -m benchmarks conversations`` writes workbench/resources/data/eval/conversations/
(the same files for the same seed; a test checks that the shipped ones are these).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEED = 20261202
MEMORIES = 9
OUT = Path(__file__).resolve().parent.parent / "workbench" / "resources" / "data" / "eval" / "conversations"

PEOPLE = [("Priya", "she"), ("Ravi", "he"), ("Mateo", "he"), ("Aisha", "she"), ("Jonas", "he"), ("Mei", "she"),
          ("Tomasz", "he"), ("Leila", "she"), ("Kwame", "he"), ("Sofia", "she"), ("Hiro", "he"), ("Nadia", "she"),
          ("Elliot", "he"), ("Yara", "she"), ("Dmitri", "he"), ("Ines", "she")]
POSSESSIVE = {"she": "her", "he": "his"}
OBJECT = {"she": "her", "he": "him"}

# An activity: what a person did, told in several ways, with the questions it answers. Slots in
# braces come from ``slots``; {X} is the person, {his} their possessive, {Y} the friend.
ACTIVITIES: list[dict[str, Any]] = [
    {"key": "race", "gist": "running the half-marathon",
     "slots": {"city": ["Lisbon", "Porto", "Valencia", "Bristol", "Cork"],
                              "time": ["1:58", "2:04", "1:51", "2:12"]},
     "say": ["{X} ran {his} first half-marathon in {city} and finished in {time}.",
             "{X} finished the {city} half-marathon in {time}; it was {his} first race that long.",
             "{X} said the {city} half-marathon nearly broke {him}, but {he} crossed the line in {time}."],
     "ask": [("How long did {X} take to finish the half-marathon?", "time"),
             ("what was {X}s time in the {city} race", "time"),
             ("How fast was {X}'s first 21k?", "time"),
             ("Where did {X} run {his} first half-marathon?", "city")],
     "when": ["When did {X} run the half-marathon?", "when was {X}'s race in {city}?"],
     "swap_object": ["Where did {X} run {his} first full marathon?", "How long did {X} take to finish the triathlon?"],
     "swap_activity": ["Where did {X} cycle {his} first century ride?"]},
    {"key": "puppy", "gist": "adopting the puppy",
     "slots": {"dog": ["Max", "Biscuit", "Luna", "Pepper", "Juniper"],
                               "breed": ["golden retriever", "beagle", "border collie", "dachshund"]},
     "say": ["{X} adopted a {breed} puppy and named it {dog}.",
             "{X} brought home a {breed} puppy from the shelter; {he} calls it {dog}.",
             "{X} has a new puppy, a {breed} called {dog}, who chews everything."],
     "ask": [("What did {X} name {his} puppy?", "dog"), ("what breed is {X}'s new dog", "breed"),
             ("Which kind of dog did {X} get from the shelter?", "breed"),
             ("what's the name of {X}'s pup again?", "dog")],
     "when": ["When did {X} adopt {his} puppy?"],
     "swap_object": ["What did {X} name {his} kitten?", "What breed is {X}'s new horse?"],
     "swap_activity": ["What did {X} name the puppy {he} is fostering for a neighbour?"]},
    {"key": "gift", "gist": "getting the birthday present from {his} {giver}",
     "slots": {"giver": ["grandmother", "grandfather"],
                              "thing": ["a silver pocket watch", "a hand-knitted scarf", "an old film camera",
                                        "a leather-bound atlas", "a set of brass compasses"]},
     "say": ["{X}'s {giver} gave {him} {thing} for {his} birthday.",
             "For {his} birthday {X} got {thing} from {his} {giver}.",
             "{X} treasures {thing} that {his} {giver} gave {him}."],
     "ask": [("What did {X}'s {giver} give {him}?", "thing"), ("what present did {X} get from {his} {giver}", "thing"),
             ("Who gave {X} {thing}?", "giver")],
     "when": ["When did {X} get a present from {his} {giver}?"],
     "swap_object": ["What did {X}'s {other_giver} give {him}?"],
     "swap_activity": ["What did {X} give {his} {giver} for {his} birthday?"]},
    {"key": "pottery", "gist": "starting pottery",
     "slots": {"studio": ["Clay Corner", "the Kiln House", "Mudworks"],
                                 "made": ["a lopsided teapot", "a set of blue mugs", "a fruit bowl"]},
     "say": ["{X} started a pottery class at {studio} and made {made}.",
             "{X} has been going to pottery at {studio}; {his} first piece was {made}.",
             "{X} showed off {made} from {his} pottery class at {studio}."],
     "ask": [("What did {X} make in {his} pottery class?", "made"), ("where does {X} do pottery", "studio"),
             ("What was the first thing {X} threw on the wheel?", "made")],
     "when": ["When did {X} start pottery?"],
     "swap_object": ["What did {X} make in {his} woodworking class?"],
     "swap_activity": ["When did {X} start painting?", "Where does {X} take painting lessons?"]},
    {"key": "job",
     "slots": {"old": ["a nurse at St Mary's", "a barista at Bean There", "a teacher at Hillcrest School"],
                             "new": ["a paramedic", "a UX designer at a fintech startup", "a park ranger"]},
     "say": ["{X} works as {old}.", "{X} told {Y} that {he} is working as {old} these days."],
     "changed": ["{X} left {his} old job and now works as {new}.", "{X} started a new job as {new}."],
     "ask_new": [("What does {X} do for work now?", "new"), ("what's {X}'s job these days", "new"),
                 ("Where is {X} working at the moment?", "new")],
     "ask_old": ["What does {X} like about working as {old} now?", "Is {X} still enjoying {his} work as {old}?"],
     "when": ["When did {X} change jobs?"]},
    {"key": "trip", "gist": "the trip to {place}",
     "slots": {"place": ["Kyoto", "Reykjavik", "the Dolomites", "Marrakesh", "Oaxaca"],
                              "saw": ["the northern lights", "a temple at dawn", "a hot-air balloon festival",
                                      "glaciers from a boat"]},
     "say": ["{X} went to {place} and saw {saw}.", "{X} is back from {place}; the best part was seeing {saw}.",
             "On {his} trip to {place}, {X} saw {saw}."],
     "ask": [("Where did {X} travel recently?", "place"), ("What did {X} see in {place}?", "saw"),
             ("what was the highlight of {X}'s holiday", "saw"), ("Which country did {X} just visit?", "place")],
     "when": ["When was {X} in {place}?"],
     "swap_object": ["What did {X} eat in {place}?", "Who did {X} meet in {place}?"],
     "swap_activity": ["Where is {X} planning to move next year?"]},
    {"key": "book", "gist": "reading {title}",
     "slots": {"title": ["The Overstory", "Piranesi", "A Gentleman in Moscow", "Station Eleven",
                                        "The Remains of the Day"]},
     "say": ["{X} just finished reading {title} and recommended it to {Y}.",
             "{X} has been reading {title} on the train and keeps recommending it.",
             "{X} said {title} is the best book {he} has read in years."],
     "ask": [("What book has {X} been reading?", "title"), ("what's {X} reading", "title"),
             ("Which novel does {X} recommend?", "title")],
     "when": ["When did {X} finish {title}?"],
     "swap_object": ["What film did {X} recommend?", "Which podcast is {X} listening to?"],
     "swap_activity": ["What book is {X} writing?"]},
    {"key": "garden", "gist": "the first {crop} harvest",
     "slots": {"crop": ["tomatoes", "chillies", "strawberries", "runner beans"],
                                "where": ["on the balcony", "in an allotment", "in raised beds"]},
     "say": ["{X} is growing {crop} {where}.", "{X} harvested {his} first {crop} {where}.",
             "{X} shared a photo of {crop} ripening {where}."],
     "ask": [("What is {X} growing?", "crop"), ("where does {X} grow vegetables", "where"),
             ("What came up first in {X}'s garden?", "crop")],
     "when": ["When did {X} harvest {his} first {crop}?"],
     "swap_object": ["What flowers is {X} growing?"],
     "swap_activity": ["What is {X} cooking for the harvest party?"]},
    {"key": "concert", "gist": "the {band} concert",
     "slots": {"band": ["Khruangbin", "Fleet Foxes", "Arooj Aftab", "the Staves"],
                                 "venue": ["the Roundhouse", "a festival field", "the Apollo"]},
     "say": ["{X} saw {band} live at {venue}.", "{X} went to a {band} concert at {venue} with {his} cousin.",
             "{X} said the {band} gig at {venue} was the best show of the year."],
     "ask": [("Which band did {X} see live?", "band"), ("where did {X} see {band}", "venue"),
             ("which gig did {X} rave about", "band")],
     "when": ["When did {X} see {band}?"],
     "swap_object": ["Which comedian did {X} see live?"],
     "swap_activity": ["Which band is {X} playing in?"]},
    {"key": "move", "gist": "moving house",
     "slots": {"area": ["a flat near the river", "a cottage outside town", "a loft downtown"]},
     "say": ["{X} moved into {area}.", "{X} finally unpacked the last boxes in {his} new place, {area}."],
     "ask": [("Where did {X} move to?", "area"), ("what's {X}'s new place like", "area")],
     "when": ["When did {X} move house?"],
     "swap_object": ["Where did {X}'s parents move to?"],
     "swap_activity": ["Where is {X} renovating a house?"]},
    {"key": "volunteer", "gist": "volunteering at {org}",
     "slots": {"org": ["a food bank", "an animal shelter", "a literacy charity"],
                                   "task": ["sorting donations", "walking dogs", "reading with children"]},
     "say": ["{X} volunteers at {org}, mostly {task}.", "{X} spent Saturday at {org} {task}."],
     "ask": [("Where does {X} volunteer?", "org"), ("what does {X} do at the charity", "task")],
     "when": ["When did {X} volunteer at {org}?"],
     "swap_object": ["Where does {X}'s sister volunteer?"],
     "swap_activity": ["Which charity did {X} donate to?"]},
    {"key": "cooking", "gist": "cooking {dish}",
     "slots": {"dish": ["a mushroom risotto", "jollof rice", "a lemon tart", "ramen from scratch"]},
     "say": ["{X} cooked {dish} for {his} parents, the first time {he} tried making it.",
             "{X} tried making {dish} for the first time, for {his} parents."],
     "ask": [("What did {X} cook for {his} parents?", "dish"), ("what dish did {X} try making", "dish"),
             ("What meal did {X} make for the family?", "dish")],
     "when": ["When did {X} cook {dish}?"],
     "swap_object": ["What did {X} bake for the school fair?"],
     "swap_activity": ["What did {X} order at the restaurant?"]},
    {"key": "course", "gist": "the {subject} course",
     "slots": {"subject": ["Spanish", "sign language", "Python", "astronomy"]},
     "say": ["{X} signed up for an evening course in {subject}.",
             "{X} passed {his} first exam in the evening {subject} course {he} signed up for."],
     "ask": [("What is {X} studying in the evenings?", "subject"), ("which course did {X} sign up for", "subject")],
     "when": ["When did {X} pass {his} exam?"],
     "swap_object": ["What instrument is {X} learning?"],
     "swap_activity": ["What subject does {X} teach?"]},
    {"key": "injury", "gist": "spraining {his} {part}",
     "slots": {"part": ["ankle", "wrist", "knee"], "how": ["bouldering", "skateboarding", "hiking"]},
     "say": ["{X} sprained {his} {part} {how}.", "{X} is on crutches after hurting {his} {part} {how}."],
     "ask": [("How did {X} hurt {his} {part}?", "how"), ("what did {X} injure", "part")],
     "when": ["When did {X} sprain {his} {part}?"],
     "swap_object": ["How did {X} break {his} arm?"],
     "swap_activity": ["What sport does {X} coach?"]},
    {"key": "art", "gist": "finishing {piece}",
     "slots": {"piece": ["a watercolour of the harbour", "a charcoal portrait of {his} dad",
                                       "a mural for a cafe"]},
     "say": ["{X} finished {piece} and sold it at the weekend market.",
             "{X} sold {piece}, which {he} had just finished, at the weekend market."],
     "ask": [("What artwork did {X} sell at the market?", "piece"),
             ("what did {X} sell at the weekend market", "piece"),
             ("What piece of art did {X} just finish?", "piece")],
     "when": ["When did {X} finish {piece}?"],
     "swap_object": ["What sculpture did {X} make?"],
     "swap_activity": ["What did {X} buy at the weekend market?"]},
]
SMALL_TALK = ["{X} said the weather has been miserable all week.", "{X} asked how {Y}'s week was going.",
              "{X} said {he} is exhausted but happy.", "{X} wished {Y} a relaxing weekend.",
              "{X} joked that {he} needs a holiday from {his} holiday.", "{X} said it was great to catch up.",
              "{X} admitted {he} has been binge-watching a baking show.", "{X} said {he} is trying to sleep more."]
REPLIES = ["Thanks, {Y}! {X} said {he} could barely walk the next day.", "{X} told {Y} that sounds amazing.",
           "{X} congratulated {Y} and asked for photos.", "{X} said {Y} should definitely try it too.",
           "{X} told {Y} {he} was proud of {OBJ_Y}.", "{X} asked {Y} whether it was hard."]
PHOTOS = ["{X} shared a photo of a sunset over rooftops.", "{X} shared a picture of {his} messy desk.",
          "{X} sent a photo of a steaming bowl of noodles.", "{X} shared a photo of a rainbow over a car park."]
UNMENTIONED = ["What colour is {X}'s car?", "Which gym does {X} go to?", "What is {X}'s favourite board game?",
               "Where did {X} go to university?", "what is {X} allergic to", "Which football team does {X} support?",
               "How many siblings does {X} have?", "What instrument does {X} play in the band?"]
MULTI = ["What did {X} do after {a_event}?", "Did {X} {b_short} before or after {a_event}?"]
TYPO = str.maketrans({"e": "r", "a": "s", "o": "i"})


@dataclass
class Memory:
    """One generated memory: its records and its questions."""

    id: str
    people: tuple[tuple[str, str], ...]
    records: list[dict[str, Any]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)


def _fill(text: str, who: tuple[str, str], friend: tuple[str, str], slots: dict[str, str]) -> str:
    name, pro = who
    values = {"X": name, "he": pro, "his": POSSESSIVE[pro], "him": OBJECT[pro], "Y": friend[0],
              "OBJ_Y": OBJECT[friend[1]], **slots}
    for _ in range(2):  # a slot may hold a placeholder of its own ("a portrait of {his} dad")
        text = text.format(**values)
    return text[0].upper() + text[1:]


def _reported(said: str, who: tuple[str, str]) -> str:
    """"Mei adopted a puppy" as told by Mei: "she adopted a puppy"."""
    name, pro = who
    if said.startswith(name + "'s "):
        return POSSESSIVE[pro] + said[len(name) + 2:]
    if said.startswith(name + " "):
        return pro + said[len(name):]
    return said[0].lower() + said[1:]


def _lower(text: str) -> str:
    return text[0].lower() + text[1:]


def _typo(rng: random.Random, text: str) -> str:
    """Two letters swapped in a lower-case word (names are typed with care, or they bind nothing)."""
    words = text.split()
    i = rng.randrange(len(words))
    if len(words[i]) > 4 and words[i].islower() and words[i].isalpha():
        w = words[i]
        j = rng.randrange(1, len(w) - 2)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]  # two letters swapped
    return " ".join(words)


def _ask(rng: random.Random, text: str) -> str:
    """A question as people type it: sometimes lower case, sometimes a typo."""
    if rng.random() < 0.12:
        text = _typo(rng, text)
    if rng.random() < 0.15:
        text = text.lower().rstrip("?")
    return text


def memory(rng: random.Random, number: int) -> Memory:
    a, b = rng.sample(PEOPLE, 2)
    mem = Memory(f"c{number:02d}", (a, b))
    day = dt.date(2025, 1, 6) + dt.timedelta(days=rng.randrange(0, 60))
    plans = {p[0]: rng.sample(ACTIVITIES, 9) for p in (a, b)}
    done: dict[str, list[tuple[dict[str, Any], dict[str, str], str, str]]] = {a[0]: [], b[0]: []}
    serial = 0

    def add(statement: str, who: tuple[str, str], names: list[str], when: dt.date, **more: Any) -> str:
        nonlocal serial
        serial += 1
        rid = f"{mem.id}-r{serial:03d}"
        mem.records.append({
            "id": rid, "statement": statement, "type": "observation", "about": names,
            "effective_from": when.isoformat(),
            "source": {"id": f"{mem.id}-s{session:02d}-{who[0].lower()}", "said_by": who[0],
                       "captured_at": f"{when.isoformat()}T{hour:02d}:00:00Z", "locator": f"session {session}"},
            **more})
        return rid

    jobs: dict[str, tuple[str, dict[str, str]]] = {}
    for session in range(1, rng.randint(20, 26) + 1):
        hour = rng.randint(8, 21)
        for who, friend in ((a, b), (b, a)) if session % 2 else ((b, a), (a, b)):
            names = [who[0], friend[0]]
            for _ in range(rng.randint(1, 3)):
                add(_fill(rng.choice(SMALL_TALK), who, friend, {}), who, [who[0]] if rng.random() < 0.5 else names,
                    day)
            if plans[who[0]] and rng.random() < 0.6:
                act = plans[who[0]].pop()
                slots = {k: rng.choice(v) for k, v in act["slots"].items()}
                if act["key"] == "job":
                    rid = add(_fill(rng.choice(act["say"]), who, friend, slots), who, [who[0]], day)
                    jobs[who[0]] = (rid, slots)
                elif rng.random() < 0.4:  # told to the friend, naming them: "Mei told Sofia that ..."
                    said = _fill(rng.choice(act["say"]), who, friend, slots)
                    if rng.random() < 0.5:
                        said = f"{who[0]} told {friend[0]} that {_reported(said, who)}"
                    else:
                        said = rng.choice([f"Thanks, {friend[0]}! ", f"Guess what, {friend[0]}: "]) + said
                    rid = add(said, who, names, day)
                else:
                    rid = add(_fill(rng.choice(act["say"]), who, friend, slots), who, [who[0]], day)
                if act["key"] != "job":
                    if act["key"] not in {x[0]["key"] for x in done[who[0]]}:
                        done[who[0]].append((act, slots, rid, day.isoformat()))
                    if rng.random() < 0.6:  # the friend answers, naming the one who told it
                        add(_fill(rng.choice(REPLIES), friend, who, {}), friend, [friend[0], who[0]], day)
                    if rng.random() < 0.35:  # and more detail in another telling
                        add(_fill(rng.choice(act["say"]), who, friend, slots), who, [who[0]], day)
            elif who[0] in jobs and rng.random() < 0.25 and not any(r.get("supersedes") == jobs[who[0]][0]
                                                                    for r in mem.records):
                old, slots = jobs[who[0]]
                job = next(x for x in ACTIVITIES if x["key"] == "job")
                new = add(_fill(rng.choice(job["changed"]), who, friend, slots), who, [who[0]], day, supersedes=old)
                done[who[0]].append((job, slots, new, day.isoformat()))
            for _ in range(rng.randint(1, 3)):
                add(_fill(rng.choice(PHOTOS + SMALL_TALK), who, friend, {}), who, names, day)
            if rng.random() < 0.5:
                add(_fill(rng.choice(REPLIES), who, friend, {}), who, names, day)
        day += dt.timedelta(days=rng.randint(7, 21))
    _questions(rng, mem, done, jobs)
    return mem


def _questions(rng: random.Random, mem: Memory, done: dict[str, list[Any]], jobs: dict[str, Any]) -> None:
    (a, b) = mem.people
    friend_of = {a[0]: b, b[0]: a}
    pro = dict(mem.people)
    n = 0

    def q(kind: str, text: str, expect: list[str], **more: Any) -> None:
        nonlocal n
        n += 1
        mem.questions.append({"id": f"{mem.id}-q{n:03d}", "memory": mem.id, "kind": kind,
                              "question": _ask(rng, text), "expect": expect,
                              **({"no_memory": True} if not expect else {}), **more})

    for name, events in done.items():
        who = (name, pro[name])
        other = friend_of[name]
        other_did = {e[0]["key"] for e in done[other[0]]}
        for act, slots, rid, _ in events:
            if act["key"] == "job":
                for text, _slot in rng.sample(act["ask_new"], 2):
                    q("single-hop", _fill(text, who, other, slots), [rid])
                old_id = next(r["supersedes"] for r in mem.records if r["id"] == rid)
                q("superseded", _fill(rng.choice(act["ask_old"]), who, other, slots), [], stale=[old_id])
                continue
            asks = rng.sample(act["ask"], min(3, len(act["ask"])))
            for text, _slot in asks:
                q("single-hop", _fill(text, who, other, slots), [rid])
            q("temporal", _fill(rng.choice(act["when"]), who, other, slots), [rid])
            if act["key"] not in other_did:  # the friend never did this: asking about them is a trap
                for text, _slot in rng.sample(act["ask"], 2):
                    q("wrong-person", _fill(text, other, who, slots), [])
            extra = {"other_giver": "grandfather" if slots.get("giver") == "grandmother" else "grandmother"}
            q("swapped-object", _fill(rng.choice(act["swap_object"]), who, other, {**slots, **extra}), [])
            q("swapped-activity", _fill(rng.choice(act["swap_activity"]), who, other, slots), [])
        for first, second in zip(events, events[1:], strict=False):
            if first[0]["key"] == "job" or second[0]["key"] == "job" or first[3] == second[3]:
                continue
            gist_a = _fill(first[0]["gist"], who, other, first[1])
            gist_b = _fill(second[0]["gist"], who, other, second[1])
            if rng.random() < 0.5:
                q("multi-hop", f"What did {name} get up to after {_lower(gist_a)}?", [first[2], second[2]])
            else:
                q("multi-hop", f"Which came first for {name}: {_lower(gist_a)} or {_lower(gist_b)}?",
                  [first[2], second[2]])
        for text in rng.sample(UNMENTIONED, 4):
            q("unmentioned", _fill(text, who, other, {}), [])


def generate(seed: int = SEED, memories: int = MEMORIES) -> list[Memory]:
    rng = random.Random(seed)
    return [memory(rng, i + 1) for i in range(memories)]


def write(out: Path = OUT, seed: int = SEED, memories: int = MEMORIES) -> dict[str, int]:
    """Write each memory's records and all questions under ``out``; returns counts."""
    out.mkdir(parents=True, exist_ok=True)
    mems = generate(seed, memories)
    for m in mems:
        (out / f"{m.id}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in m.records),
                                           encoding="utf-8")
    questions = [x for m in mems for x in m.questions]
    names = {m.id: {p for p, _ in m.people} for m in mems}
    plan = {m.id: next(o.id for o in mems[i + 1:] + mems[:i] if not names[o.id] & names[m.id])
            for i, m in enumerate(mems)}
    (out / "memories.json").write_text(json.dumps({"seed": seed, "distractors": plan}, indent=1) + "\n",
                                       encoding="utf-8")
    (out / "questions.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in questions),
                                         encoding="utf-8")
    kinds: dict[str, int] = {}
    for x in questions:
        kinds[x["kind"]] = kinds.get(x["kind"], 0) + 1
    return {"memories": len(mems), "records": sum(len(m.records) for m in mems), "questions": len(questions),
            **kinds}
