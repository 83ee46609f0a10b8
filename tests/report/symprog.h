/* Inlined into compute(): its lines belong to this header (fl=...symprog.h). */
static inline int square(int x)
{
	return x * x;	/* LINE_SQUARE */
}
