/* real-pkg: libpng
 * Real-library driver: libpng (Debian's libpng16).  work() encodes a
 * 16x16 RGB image into a PNG in memory and decodes it again with the
 * simplified API.  With the argument "0" main skips work(). */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 16
#define H 16
static unsigned char pixels[W * H * 3], back[W * H * 3];
static unsigned char file[65536];
/* Not inlined: gcc's inline memset is "mov $13, %ecx; rep stos" in one
 * superblock, whose first rcx == 0 exit VEX folds away (tests/oracle). */
static void *(*volatile clear)(void *, int, size_t) = memset;

__attribute__((noinline)) static void work(void)
{
	png_image img;
	png_alloc_size_t size = sizeof file;

	clear(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	img.width = W;
	img.height = H;
	img.format = PNG_FORMAT_RGB;
	if (!png_image_write_to_memory(&img, file, &size, 0, pixels, 0, NULL))
		exit(2);
	clear(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, file, size))
		exit(3);
	img.format = PNG_FORMAT_RGB;
	if (!png_image_finish_read(&img, NULL, back, 0, NULL))
		exit(4);
}

int main(int argc, char **argv)
{
	for (int i = 0; i < W * H * 3; i++)
		pixels[i] = (unsigned char)(i * 5 + i / 96);
	if (argc < 2 || argv[1][0] != '0')
		work();
	printf("%d\n", memcmp(pixels, back, sizeof back) == 0);
	return 0;
}
