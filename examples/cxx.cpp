// C++ at ring 0: static constructors and destructors, std::string,
// std::vector, std::map, iostream, and exceptions thrown and caught across
// functions (with destructors run during unwinding).
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

struct Announcer {
	std::string name;
	explicit Announcer(std::string n) : name(n) { std::cout << "constructed " << name << '\n'; }
	~Announcer() { std::cout << "destroyed " << name << std::endl; }
};

static Announcer global_object("a static object");

static int depth_reached;

static void thrower(int depth)
{
	Announcer local("a local in frame " + std::to_string(depth));
	depth_reached = depth;
	if (depth == 3)
		throw std::runtime_error("thrown three frames down");
	thrower(depth + 1);
}

int main()
{
	std::vector<int> squares;
	for (int i = 1; i <= 5; i++)
		squares.push_back(i * i);
	int sum = 0;
	for (int s : squares)
		sum += s;
	std::cout << "vector of " << squares.size() << " squares, sum " << sum << '\n';

	std::map<std::string, int> letters;
	for (char c : std::string("unikernel linux"))
		if (c != ' ')
			letters[std::string(1, c)]++;
	std::cout << "map:";
	for (const auto &[letter, count] : letters)
		std::cout << ' ' << letter << '=' << count;
	std::cout << '\n';

	try {
		thrower(1);
	} catch (const std::exception &e) {
		std::cout << "caught \"" << e.what() << "\" after reaching depth " << depth_reached << '\n';
	}
	try {
		std::vector<int>().at(1);
	} catch (const std::out_of_range &) {
		std::cout << "caught std::out_of_range from the library\n";
	}
	return 0;
}
