// A compiled test: prints a line and succeeds.
#include <cstdio>

int main() {
  std::printf("calc: 1 + 2 = %d\n", 1 + 2);
  return 1 + 2 == 3 ? 0 : 1;
}
