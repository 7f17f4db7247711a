"""The search engine through build/toolsearch: what the gateway's search
will answer, and the retrieval quality docs/search.md reports."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import search_eval  # noqa: E402

CLI = os.path.join(ROOT, "build", "toolsearch")
CATALOGUE = os.path.join(ROOT, "t", "search", "catalogue.json")
FIXTURE = os.path.join(ROOT, "t", "fixtures", "claude-code", "ts-unset",
                       "002.json")


def search(*args, tools=CATALOGUE):
    return subprocess.run([CLI, "search", "--tools", tools] + list(args),
                          capture_output=True, text=True, timeout=60)


def test_keyword_query_on_a_request_body():
    r = search("--scoring", "seed", "+github issue", tools=FIXTURE)
    assert r.returncode == 0
    names = r.stdout.split()
    assert len(names) == 5
    assert all(n.startswith("mcp__github__") and "issue" in n for n in names)


def test_explain_shows_the_seed_points():
    r = search("--explain", "--scoring", "seed", "github issue",
               tools=FIXTURE)
    first = r.stdout.splitlines()[0].split("\t")
    assert first[0] == "mcp__github__create_issue"
    assert "github:part+12" in first[2] and "issue:part+12" in first[2]


def test_select_reports_missing_names_and_finds_loaded_ones():
    r = search("select:Read, mcp__memory__read_graph ,nope", tools=FIXTURE)
    assert r.returncode == 0
    assert r.stdout.split() == ["Read", "mcp__memory__read_graph"]
    assert 'no tool named "nope"' in r.stderr


def test_no_match_lists_the_catalogue_bounded():
    r = search("qqqzzzxxx")
    assert r.returncode == 1 and r.stdout == ""
    assert "no match; the tools are: mcp__chrome-devtools__" in r.stderr
    listed = r.stderr.split("the tools are: ", 1)[1]
    assert len(listed) < 4096 and "more" in listed


def test_regex_shaped_and_huge_queries_are_text():
    r = search("(a+)+$ [[[ .*")
    assert r.returncode == 1
    r = search("x" * 100000)
    assert r.returncode == 1 and "query cut to 1024 bytes" in r.stderr


def test_batch_answers_every_line():
    r = subprocess.run([CLI, "search", "--tools", CATALOGUE, "--batch"],
                       input="slack send\n\nmcp__memory\n",
                       capture_output=True, text=True, timeout=60)
    lines = r.stdout.split("\n")
    assert lines[0].startswith("mcp__slack__")
    assert lines[1] == ""
    assert lines[2].split("\t")[0].startswith("mcp__memory__")


def test_retrieval_quality_holds():
    """hybrid keeps the seed's keyword quality and beats plain BM25 on
    natural-language queries, on the held-out half too (docs/search.md
    has the figures)"""
    with open(os.path.join(ROOT, "t", "search", "queries.json")) as f:
        queries = json.load(f)
    table = search_eval.evaluate(CATALOGUE, queries,
                                 search_eval.recorded_split(queries))
    for half in ("dev", "test", "all"):
        kw, nat = table["keyword"][half], table["natural"][half]
        assert kw["hybrid"][1] >= kw["seed"][1]
        assert nat["hybrid"][1] > nat["bm25"][1] > nat["seed"][1]
        assert nat["hybrid"][2] > nat["bm25"][2]


def test_step_retrieval_holds():
    """one query per step of a task: the hybrid scorer finds at least 1.2
    times the steps plain BM25 finds in its top 5 on the held-out half,
    and more tasks whole than BM25, which finds more than the seed scorer
    (docs/search.md has the figures)"""
    with open(search_eval.STEPS) as f:
        tasks = json.load(f)
    table = search_eval.step_evaluate(CATALOGUE, tasks,
                                      search_eval.recorded_step_split(tasks))
    for half in ("dev", "test", "all"):
        res = table[half]
        assert res["hybrid"][1] >= 1.2 * res["bm25"][1] - 1e-9
        assert res["hybrid"][0] > res["bm25"][0] > res["seed"][0]


PUBLIC = os.path.join(ROOT, "t", "search", "public")

# dev-half queries of the public sets (t/search/README.md) whose gold the
# default scorer finds in its top 5: request words left out ("give",
# "looking", "able", "like") and the words past the 16th of a task
# sentence ("item recipes") decide them
PINNED = [
    ("bfcl-multiturn",
     "Before I set off, I want to share my travel excitement with friends "
     "on Twitter by describing the wonderful places I'll be exploring "
     "during this adventure. Would you be able to post a tweet saying "
     "'Excited for the trip!'?", ["post_tweet"]),
    ("bfcl-multiturn",
     "Oh man, I've just logged into my trading account and I'm super keen "
     "to take a look at the stocks I'm keeping an eye on. Could I get you "
     "to pull up the latest stock symbols from my watchlist?",
     ["get_watchlist"]),
    ("metatool", "Can you give me some tips on creating a clear product "
     "vision?", ["kraftful"]),
    ("metatool", "I'm looking for a brandable .com domain name for my "
     "startup.", ["URLTool"]),
    ("stabletoolbench",
     "I need to create a comprehensive guide for Lost Ark players. Can you "
     "fetch me the list of all classes in the game, along with the "
     "characters associated with each class? Additionally, please provide "
     "me with the details of the stronghold item recipes and battle item "
     "recipes.", ["Lost Ark Simple::Get Classes List",
                  "Lost Ark Simple::Get Stronghold Item Recipes",
                  "Lost Ark Simple::Get Battle Item Recipes"]),
    # the share of the query's words a tool has decides these: a tool that
    # matches one word strongly ("order", "find", "user") no longer beats
    # the one that has the request's other words too.  (BFCL's "top up my
    # trading account" pinned here before: fund_account, 5th, went to 6th
    # when the getter rule below gave that place to get_stock_info, the
    # getter of the best tool, place_order.)
    ("metatool", "Can you help me find a good pair of running shoes?",
     ["ProductSearch"]),
    # a task sentence of more than 16 words brings no thesaurus relatives:
    # its own words decide these ("search", "title", "author"; "vacation",
    # "itinerary").  (The UUIDv4 generator of a task sentence pinned here
    # before fell from 5th to 6th place, 0.009 behind, with this rule.)
    ("stabletoolbench",
     "I'm a teacher and I want to create a reading list for my students. "
     "Can you recommend books by the author 'Roald Dahl' suitable for "
     "children? Additionally, I would like to search for books with the "
     "title 'adventure' and provide their author and book details.",
     ["Open Library::Search Author", "Open Library::Search Title"]),
    ("metatool", "I need personalized assistance from a travel expert who "
     "can meticulously create a well-rounded travel itinerary tailored to "
     "my preferences and interests for a delightful two-week vacation in "
     "Europe.", ["TripTool"]),
    # the fifth place of a task sentence goes to the getter the best tool
    # needs first: place_order's symbol is "Symbol of the stock to trade"
    # (get_stock_info), estimate_distance's cityA "The zipcode of the
    # first city" (get_zipcode_based_on_city), Artist featuring's id
    # "Artist ID" (Get artists)
    ("bfcl-multiturn", "Let's proceed with an order. Execute a transaction "
     "for 150 shares at the present market value for the stock we just "
     "added.", ["place_order", "get_stock_info"]),
    ("bfcl-multiturn", "I'm currently in Rivermist planning a trip to "
     "Stonebrook. Could you provide an estimate of the distance and "
     "forward this info to my cousin Bob via text, in the format 'The "
     "distance from Rivermist to Stonebrook is xxx km.', where xxx is "
     "replaced by the distance value, in one decimal place)?",
     ["estimate_distance", "get_zipcode_based_on_city"]),
    ("stabletoolbench", "I'm planning a party and I want to create a "
     "playlist with songs featuring my favorite artist. Can you provide me "
     "with a list of songs that feature the artist with ID "
     "'2w9zwq3AktTeYYMuhMjju8'? I would like the songs to have their "
     "names, descriptions, and images.",
     ["Spotify Web::Artist featuring", "Spotify Web::Get artists"]),
]


def test_public_sets_pinned_queries():
    for name, query, gold in PINNED:
        r = search(query, tools=os.path.join(PUBLIC, name, "tools.json"))
        assert r.returncode == 0
        assert set(gold) <= set(r.stdout.splitlines()), (name, query)


def test_a_query_of_request_words_only_keeps_them():
    """words around a request are left out of a query that has others
    (the same ranking as without them); a query of nothing else is
    searched with them"""
    plain = search("github issues", tools=FIXTURE)
    wordy = search("could you kindly provide information about github "
                   "issues", tools=FIXTURE)
    assert wordy.returncode == 0 and wordy.stdout == plain.stdout
    r = search("help", tools=FIXTURE)
    assert r.returncode == 0 and "mcp__everything__get-env" in r.stdout
