"""French and German (and Russian, Swedish) rules on hand-written pairs: one positive and one negative per feature.

A positive pair differs exactly in the phenomenon; its negative keeps the phenomenon identical on both sides
(or absent), so a rule that fires on anything, or on nothing, fails.
"""

import pandas as pd
import pytest

from diagnostics.annotate import annotate, supported_features

CASES = {
    "fr": [
        ("Negation", "Le chat n'est pas sur le tapis.", "Le chat est sur le tapis.", "Le chat dort sur le tapis.", "Le chat est sur le tapis."),
        ("Double negation", "Il n'est pas vrai que Jean ne soit pas venu.", "Jean est venu.", "Jean est venu hier.", "Jean est venu."),
        ("Morphological negation", "Ce jeu est injuste.", "Ce jeu est juste.", "Ce jeu est très juste.", "Ce jeu est juste."),
        ("Quantifiers", "Tous les étudiants ont réussi.", "Quelques étudiants ont réussi.", "Les étudiants ont réussi.", "Les étudiants ont réussi hier."),
        # a universal replaced by another quantifier is Quantifiers; the logic feature is instantiation
        ("Universal", "Tous les étudiants ont réussi.", "Marie a réussi.", "Tous les étudiants ont réussi.", "La plupart des étudiants ont réussi."),
        ("Quantifiers", "Il pleut souvent à Paris.", "Il pleut rarement à Paris.", "Il pleut à Paris.", "Il pleut à Lyon."),
        ("Disjunction", "Marie boit du thé ou du café.", "Marie boit du thé.", "Marie boit du thé et du café.", "Marie boit du café et du thé."),
        ("Conjunction", "Marie boit du thé et du café.", "Marie boit du thé.", "Marie boit du thé.", "Marie boit du café."),
        ("Conditionals", "Si il pleut, Jean reste à la maison.", "Jean reste à la maison.", "Jean reste à la maison.", "Jean reste chez lui."),
        ("Intervals/Numbers", "Elle a trois enfants.", "Elle a deux enfants.", "Elle a des enfants.", "Elle a beaucoup d'enfants."),
        ("Active/Passive", "La fenêtre a été cassée par Jean.", "Jean a cassé la fenêtre.", "Jean a cassé la fenêtre.", "Jean a cassé la porte."),
        ("Relative clauses", "L'homme qui chante est mon frère.", "L'homme est mon frère.", "L'homme est mon frère.", "L'homme est mon ami."),
        ("Datives", "Jean a donné le livre à Marie.", "Jean a donné le livre.", "Jean a lu le livre.", "Jean a acheté le livre."),
        ("Factivity", "Jean sait que la Terre est ronde.", "La Terre est ronde.", "La Terre est ronde.", "La Terre est plate."),
        ("Nominalization", "La construction du pont a duré deux ans.", "Ils ont construit le pont en deux ans.", "Le pont est grand.", "Le pont est long."),
        ("Named entities", "La réunion a eu lieu à Paris.", "La réunion a eu lieu à Berlin.", "La réunion a eu lieu hier.", "La réunion a eu lieu ce matin."),
    ],
    "de": [
        ("Negation", "Die Katze sitzt nicht auf der Matte.", "Die Katze sitzt auf der Matte.", "Die Katze schläft auf der Matte.", "Die Katze sitzt auf der Matte."),
        ("Double negation", "Es stimmt nicht, dass Hans nicht kam.", "Hans kam.", "Hans kam gestern.", "Hans kam."),
        ("Morphological negation", "Das Spiel ist unfair.", "Das Spiel ist fair.", "Das Spiel ist sehr fair.", "Das Spiel ist fair."),
        ("Quantifiers", "Alle Studenten haben bestanden.", "Einige Studenten haben bestanden.", "Die Studenten haben bestanden.", "Die Studenten haben gestern bestanden."),
        ("Universal", "Alle Studenten haben bestanden.", "Anna hat bestanden.", "Alle Studenten haben bestanden.", "Viele Studenten haben bestanden."),
        ("Quantifiers", "In Berlin regnet es oft.", "In Berlin regnet es selten.", "In Berlin regnet es.", "In Hamburg regnet es."),
        ("Disjunction", "Maria trinkt Tee oder Kaffee.", "Maria trinkt Tee.", "Maria trinkt Tee und Kaffee.", "Maria trinkt Kaffee und Tee."),
        ("Conjunction", "Maria trinkt Tee und Kaffee.", "Maria trinkt Tee.", "Maria trinkt Tee.", "Maria trinkt Kaffee."),
        ("Conditionals", "Wenn es regnet, bleibt Hans zu Hause.", "Hans bleibt zu Hause.", "Hans bleibt zu Hause.", "Hans bleibt daheim."),
        ("Intervals/Numbers", "Sie hat drei Kinder.", "Sie hat zwei Kinder.", "Sie hat Kinder.", "Sie hat viele Kinder."),
        ("Active/Passive", "Das Fenster wurde von Hans zerbrochen.", "Hans zerbrach das Fenster.", "Hans zerbrach das Fenster.", "Hans zerbrach die Tür."),
        ("Relative clauses", "Der Mann, der dort steht, ist Arzt.", "Der Mann ist Arzt.", "Der Mann ist Arzt.", "Der Mann ist Lehrer."),
        ("Datives", "Anna gab dem Kind ein Buch.", "Anna gab ein Buch.", "Anna las ein Buch.", "Anna kaufte ein Buch."),
        ("Factivity", "Hans weiß, dass die Erde rund ist.", "Die Erde ist rund.", "Die Erde ist rund.", "Die Erde ist flach."),
        ("Nominalization", "Die Zerstörung der Stadt schockierte die Welt.", "Sie zerstörten die Stadt.", "Die Stadt ist groß.", "Die Stadt ist alt."),
        ("Named entities", "Das Treffen fand in Stockholm statt.", "Das Treffen fand in Berlin statt.", "Das Treffen fand gestern statt.", "Das Treffen fand heute statt."),
    ],
    "ru": [
        ("Negation", "Кошка не сидит на ковре.", "Кошка сидит на ковре.", "Кошка спит на ковре.", "Кошка сидит на ковре."),
        ("Morphological negation", "Консоль недоступна по цене.", "Консоль доступна по цене.", "Консоль очень доступна.", "Консоль доступна."),
        ("Active/Passive", "Окно было разбито Джоном.", "Джон разбил окно.", "Джон разбил окно.", "Джон разбил дверь."),
        ("Datives", "Анна дала книгу ребёнку.", "Анна дала книгу.", "Анна читала книгу.", "Анна купила книгу."),
        ("Relative clauses", "Человек, который поёт, мой брат.", "Человек мой брат.", "Человек мой брат.", "Человек мой друг."),
        ("Disjunction", "Мария пьёт чай или кофе.", "Мария пьёт чай.", "Мария пьёт чай и кофе.", "Мария пьёт кофе и чай."),
        ("Active/Passive", "Мосты строятся инженерами.", "Инженеры строят мосты.", "Инженеры строят мосты.", "Инженеры строят дома."),
        ("Existential", "Кто-то открыл дверь.", "Анна открыла дверь.", "Кто-то открыл дверь.", "Кто-то открыл окно."),
        ("Existential", "Никто не пришёл на урок.", "Пётр пришёл на урок.", "Никто не пришёл на урок.", "Никто не пришёл на лекцию."),
        ("Datives", "Учитель показал ученикам карту.", "Учитель показал карту.", "Учитель показал ученикам карту.", "Учитель показал ученикам схему."),
        ("Universal", "Все студенты сдали экзамен.", "Студенты сдали экзамен.", "Все студенты сдали экзамен.", "Всех студентов допустили к экзамену."),
        ("Temporal", "У неё есть собака.", "У неё была собака.", "У неё была собака.", "У неё была кошка."),
        ("Genitives/Partitives", "Он похвалил работу учителя.", "Он похвалил учительскую работу.", "Он похвалил работу.", "Он похвалил хорошую работу."),
        # "и" as a particle ("то же, что и ...") and "и" / "но" linking whole clauses are not conjunct elimination
        ("Conjunction", "Мария пьёт чай и кофе.", "Мария пьёт чай.", "Мы сделали то же, что и они.", "Мы сделали то же."),
        ("Conjunction", "Мы купили хлеб и молоко.", "Мы купили хлеб.", "Он пришёл домой, и начался дождь.", "Он пришёл домой."),
        # "всё чаще" (ever more often), "всё ещё" (still) do not quantify
        ("Universal", "Все лезвия острые.", "Лезвия острые.", "Лезвия появляются всё чаще.", "Лезвия появляются чаще."),
        ("Universal", "Он прочитал все книги.", "Он прочитал книги.", "Он всё ещё читает книгу.", "Он читает книгу."),
        # a universal or existential replaced by another quantifier is Quantifiers (lexical), not the logic feature
        ("Universal", "Каждый выпускник нашёл работу.", "Анна нашла работу.", "Все выпускники нашли работу.", "Большинство выпускников нашли работу."),
        ("Existential", "Кто-то знает ответ.", "Сьюзен знает ответ.", "Некоторые студенты знают ответ.", "Многие студенты знают ответ."),
        # adverbs of quantification quantify over cases
        ("Quantifiers", "Закономерности часто незаметны.", "Закономерности всегда незаметны.", "Закономерности незаметны.", "Закономерности заметны."),
        # "не только" is additive, "не менее" a bound: neither negates the clause
        ("Negation", "Анна не знает физику.", "Анна знает физику.", "Анна знает не только физику.", "Анна знает физику."),
        ("Negation", "Он не прожил там десять лет.", "Он прожил там десять лет.", "Он прожил там не менее десяти лет.", "Он прожил там десять лет."),
        # case forms of one pronoun are the same referring expression
        ("Anaphora/Coreference", "Анна сказала, что она устала.", "Анна сказала, что Анна устала.", "Я встретил его вчера.", "Я позвонил ему вчера."),
        # present of a modal / attitude verb vs past is not a change of time reference
        ("Temporal", "Иван пришёл до обеда.", "Иван пришёл после обеда.", "Гриша надеется выиграть матч.", "Гриша выиграл матч."),
        # only который / чей count; a participial phrase on one side does not
        ("Relative clauses", "Книга, которую я купил, лежит на столе.", "Книга лежит на столе.", "Книга, лежащая на столе, новая.", "Книга новая."),
        # "что" + finite verb after a noun: relative "which"; after an adjective it opens a result clause
        ("Relative clauses", "Он изменил правило, что дало нам время.", "Он изменил правило.", "Кабачок вырос таким большим, что заслонил грядку.", "Кабачок вырос большим."),
        # implicatives and perception verbs: trying / almost do not entail the event
        ("Factivity", "Гриша старался выиграть матч.", "Гриша выиграл матч.", "Гриша выиграл матч вчера.", "Гриша выиграл матч."),
        ("Factivity", "Гриша почти выиграл матч.", "Гриша выиграл матч.", "Гриша быстро выиграл матч.", "Гриша выиграл матч."),
        # a reflexive-only verb with an instrumental object is not a passive
        ("Active/Passive", "Семена поедаются воробьями.", "Воробьи едят семена.", "Воробьи питаются семенами.", "Воробьи едят семена."),
        # a dative after a preposition ("к согласию") is no recipient
        ("Datives", "Анна прислала письмо брату.", "Анна прислала письмо.", "Анна прислала письмо к празднику.", "Анна прислала письмо."),
        # a negative pronoun split by a preposition
        ("Existential", "Они не могли рассчитывать ни на кого.", "Они не могли рассчитывать на короля.", "Они рассчитывали на короля.", "Они рассчитывали на королеву."),
        # pairs that share little (paraphrases, common-sense pairs) get no feature from a word that happens to differ
        ("Conjunction", "Врач и пациент несут ответственность за лечение.", "Врач несёт ответственность за лечение.", "Пчёлы и осы летают быстро.", "Вечером в городе шёл сильный дождь."),
    ],
    "sv": [
        ("Negation", "Katten sitter inte på mattan.", "Katten sitter på mattan.", "Katten sover på mattan.", "Katten sitter på mattan."),
        ("Morphological negation", "Spelet är orättvist.", "Spelet är rättvist.", "Spelet är mycket rättvist.", "Spelet är rättvist."),
        ("Disjunction", "Maria dricker te eller kaffe.", "Maria dricker te.", "Maria dricker te och kaffe.", "Maria dricker kaffe och te."),
        ("Intervals/Numbers", "Hon har tre barn.", "Hon har två barn.", "Hon har barn.", "Hon har många barn."),
        ("Active/Passive", "Fönstret krossades av pojken.", "Pojken krossade fönstret.", "Boken handlar om av krig.", "Boken handlar om krig."),
        ("Active/Passive", "Huset byggdes förra året.", "De byggde huset förra året.", "De byggde huset förra året.", "De byggde garaget förra året."),
        # a deponent s-verb (hoppas, lyckas, finnas) is active: no passive on either side; "blev mycket" is no bli-passive
        ("Active/Passive", "Dörren öppnades av Anna.", "Anna öppnade dörren.", "Anna hoppades att det skulle regna.", "Anna trodde att det skulle regna."),
        ("Active/Passive", "Han blev skadad av bollen.", "Bollen skadade honom.", "Det blev mycket bättre.", "Det var bättre."),
        ("Conditionals", "Om det regnar stannar Anna hemma.", "Anna stannar hemma.", "Boken handlar om regn.", "Boken handlar om snö."),
        ("Datives", "Anna gav honom en bok.", "Anna köpte en bok.", "Anna gav honom en bok.", "Anna gav honom ett brev."),
        ("Datives", "Hon skickade brevet till Erik.", "Hon skrev brevet.", "Hon skrev brevet.", "Hon läste brevet."),
    ],
}

PARAMS = [pytest.param(lang, *case, id=f"{lang}-{case[0]}") for lang, cases in CASES.items() for case in cases]


@pytest.fixture(scope="module")
def annotated():
    """All hand-written pairs of a language annotated in one batch (models load once)."""
    out = {}
    for lang, cases in CASES.items():
        rows = [(p, h) for _, p, h, _, _ in cases] + [(p, h) for _, _, _, p, h in cases]
        frame = annotate(pd.DataFrame(rows, columns=["premise", "hypothesis"]), lang)
        out[lang] = frame
    return out


@pytest.mark.parametrize("lang,feature,pos_p,pos_h,neg_p,neg_h", PARAMS)
def test_feature_positive_and_negative(annotated, lang, feature, pos_p, pos_h, neg_p, neg_h):
    frame = annotated[lang]
    assert feature in supported_features(lang)
    positive = frame[(frame.premise == pos_p) & (frame.hypothesis == pos_h)].iloc[0]
    negative = frame[(frame.premise == neg_p) & (frame.hypothesis == neg_h)].iloc[0]
    assert feature in positive.auto_features, (positive.premise, positive.hypothesis, positive.auto_features)
    assert feature not in negative.auto_features, (negative.premise, negative.hypothesis, negative.auto_features)
    assert positive.feature_sides[feature] in ("premise", "hypothesis", "both")


def test_every_language_supports_the_studys_features():
    study = {"Negation", "Double negation", "Quantifiers", "Universal", "Existential", "Conjunction", "Disjunction",
             "Conditionals", "Temporal", "Intervals/Numbers", "Named entities", "Anaphora/Coreference",
             "Relative clauses", "Datives", "Genitives/Partitives", "Active/Passive", "Factivity", "Nominalization",
             "Morphological negation"}
    for lang in ("en", "ru", "fr", "de", "sv"):
        assert study <= set(supported_features(lang)), lang
