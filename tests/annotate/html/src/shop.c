/* shop.c: the fixture of tests/annotate/html.py (a hand-written profile, shop.cgout). */
/* filler 2 */
/* filler 3 */
/* filler 4 */
/* filler 5 */
/* filler 6 */
/* filler 7 */
/* filler 8 */
/* filler 9 */
static int lookup(struct table *t, const char *key)
{
	struct item *it = t->slot[hash(key) % t->n];   /* the cold pointer */
	return it ? it->price : -1;
}
/* filler 15 */
/* filler 16 */
/* filler 17 */
/* filler 18 */
/* filler 19 */
static unsigned hash(const char *s)
{ unsigned h = 5381; while (*s) h = h * 33 + *s++; return h; }
/* filler 22 */
/* filler 23 */
/* filler 24 */
/* filler 25 */
/* filler 26 */
/* filler 27 */
/* filler 28 */
/* filler 29 */
static int process(struct table *t, char **keys, int n)
{ int sum = 0; for (int i = 0; i < n; i++)
/* filler 32 */
/* filler 33 */
/* filler 34 */
		sum += lookup(t, keys[i]); counters[1]++;
	return sum; }
/* filler 37 */
/* filler 38 */
/* filler 39 */
/* filler 40 */
/* filler 41 */
/* filler 42 */
/* filler 43 */
/* filler 44 */
/* filler 45 */
/* filler 46 */
/* filler 47 */
/* filler 48 */
/* filler 49 */
int main(int argc, char **argv)
/* filler 51 */
{ struct table *t = load(); counters[0]++;
	return process(t, argv, argc) + lookup(t, "x") > 0; }
/* filler 54 */
/* filler 55 */
/* filler 56 */
/* filler 57 */
/* filler 58 */
/* filler 59 */
/* filler 60 */
/* filler 61 */
/* filler 62 */
/* filler 63 */
/* filler 64 */
/* filler 65 */
/* filler 66 */
/* filler 67 */
/* filler 68 */
/* filler 69 */
/* filler 70 */
