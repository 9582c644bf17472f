#include <iostream>
int main() { std::cout << "warpforge\n"; return 0; }
